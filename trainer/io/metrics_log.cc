#include "trainer/io/metrics_log.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/safe_path.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace trainer {

std::string MetricsLine(int64_t step, const std::map<std::string, double>& values,
                        int64_t samples) {
  std::string out = absl::StrCat("{\"step\": ", step);
  if (samples >= 0) absl::StrAppend(&out, ", \"samples\": ", samples);
  for (const auto& [key, value] : values) {
    absl::StrAppend(&out, ", ", nlohmann::json(key).dump(), ": ");
    if (std::isfinite(value)) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.9g", value);
      out += buf;
    } else {
      out += "null";
    }
  }
  return out + "}";
}

MetricsLog::~MetricsLog() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status MetricsLog::Open(const std::string& path, int64_t resume_step) {
  path_ = path;
  if (resume_step >= 0) {
    std::ifstream in(path);
    std::string kept, line;
    while (in && std::getline(in, line)) {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_object() && j.contains("step") && j["step"].is_number_integer() &&
          j["step"].get<int64_t>() <= resume_step) {
        kept += line + "\n";
      }
    }
    if (absl::Status s = WriteFileAtomically(path, kept); !s.ok()) return s;
  }
  // Never through a link planted in the trial's folder (common/safe_path.h).
  absl::StatusOr<std::FILE*> file = OpenSafeStream(path, /*append=*/resume_step >= 0);
  if (!file.ok()) return file.status();
  file_ = *file;
  return absl::OkStatus();
}

absl::Status MetricsLog::Append(int64_t step, const std::map<std::string, double>& values,
                                int64_t samples) {
  if (file_ == nullptr) return absl::FailedPreconditionError("metrics log is not open");
  const std::string line = MetricsLine(step, values, samples) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    return absl::DataLossError(absl::StrCat(path_, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
