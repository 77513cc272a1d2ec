#include "common/event_file.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "common/proto/tensorboard.pb.h"
#include "common/safe_path.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace {

namespace tb = ::tunefleet::tensorboard;

constexpr char kFileVersion[] = "brain.Event:2";
constexpr char kHParamsPlugin[] = "hparams";
constexpr char kSessionStartTag[] = "_hparams_/session_start_info";
constexpr char kSessionEndTag[] = "_hparams_/session_end_info";

// The byte-at-a-time table of the reflected Castagnoli polynomial 0x82f63b78.
std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    t[i] = c;
  }
  return t;
}

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string Hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// A Summary value of the HParams plugin.
std::string HParamsEvent(const std::string& tag, const tb::HParamsPluginData& data,
                         double wall_time) {
  tb::Event e;
  e.set_wall_time(wall_time);
  tb::Summary::Value* v = e.mutable_summary()->add_value();
  v->set_tag(tag);
  tb::SummaryMetadata::PluginData* plugin = v->mutable_metadata()->mutable_plugin_data();
  plugin->set_plugin_name(kHParamsPlugin);
  plugin->set_content(data.SerializeAsString());
  return e.SerializeAsString();
}

}  // namespace

uint32_t Crc32c(absl::string_view data) {
  static const std::array<uint32_t, 256> table = MakeTable();
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : data) crc = table[(crc ^ c) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

std::string FrameRecord(absl::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 16);
  PutLe(out, payload.size(), 8);
  PutLe(out, MaskCrc(Crc32c(out)), 4);
  out.append(payload.data(), payload.size());
  PutLe(out, MaskCrc(Crc32c(payload)), 4);
  return out;
}

absl::StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Open(const std::string& dir,
                                                                       double wall_time) {
  if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
  const std::string path =
      JoinPath(dir, absl::StrFormat("events.out.tfevents.%lld.%s.%d",
                                    static_cast<long long>(wall_time), Hostname(), ::getpid()));
  // Never through a link planted in the folder (common/safe_path.h).
  absl::StatusOr<std::FILE*> file = OpenSafeStream(path, /*append=*/true);
  if (!file.ok()) return file.status();
  std::unique_ptr<EventFileWriter> w(new EventFileWriter(path, *file));
  tb::Event first;
  first.set_wall_time(wall_time);
  first.set_file_version(kFileVersion);
  if (absl::Status s = w->Write(first.SerializeAsString()); !s.ok()) return s;
  return w;
}

EventFileWriter::~EventFileWriter() { std::fclose(file_); }

absl::Status EventFileWriter::Write(const std::string& event) {
  const std::string record = FrameRecord(event);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    return ErrnoStatus(errno, path_);
  }
  return absl::OkStatus();
}

absl::Status EventFileWriter::WriteScalars(int64_t step,
                                           const std::map<std::string, double>& values,
                                           double wall_time) {
  tb::Event e;
  e.set_wall_time(wall_time);
  e.set_step(step);
  for (const auto& [key, value] : values) {
    if (!std::isfinite(value)) continue;
    tb::Summary::Value* v = e.mutable_summary()->add_value();
    v->set_tag(key);
    v->set_simple_value(static_cast<float>(value));
  }
  return Write(e.SerializeAsString());
}

absl::StatusOr<HParams> ParseHParams(absl::string_view json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json.begin(), json.end());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("hyperparameters: not JSON: ", e.what()));
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError("hyperparameters: want a JSON object of name: value");
  }
  HParams h;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const nlohmann::json& v = it.value();
    if (v.is_boolean()) {
      h.numbers[it.key()] = v.get<bool>() ? 1.0 : 0.0;
    } else if (v.is_number()) {
      h.numbers[it.key()] = v.get<double>();
    } else if (v.is_string()) {
      h.strings[it.key()] = v.get<std::string>();
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("hyperparameters: '", it.key(), "' is not a number, string or boolean"));
    }
  }
  return h;
}

absl::Status EventFileWriter::WriteSessionStart(const HParams& hparams,
                                                const std::string& model_uri, double wall_time) {
  tb::HParamsPluginData data;
  tb::SessionStartInfo* start = data.mutable_session_start_info();
  for (const auto& [k, v] : hparams.numbers) (*start->mutable_hparams())[k].set_number_value(v);
  for (const auto& [k, v] : hparams.strings) (*start->mutable_hparams())[k].set_string_value(v);
  start->set_model_uri(model_uri);
  start->set_start_time_secs(wall_time);
  return Write(HParamsEvent(kSessionStartTag, data, wall_time));
}

absl::Status EventFileWriter::WriteSessionEnd(bool success, double wall_time) {
  tb::HParamsPluginData data;
  tb::SessionEndInfo* end = data.mutable_session_end_info();
  end->set_status(success ? tb::STATUS_SUCCESS : tb::STATUS_FAILURE);
  end->set_end_time_secs(wall_time);
  return Write(HParamsEvent(kSessionEndTag, data, wall_time));
}

}  // namespace tunefleet
