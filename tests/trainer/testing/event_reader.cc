#include "tests/trainer/testing/event_reader.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace trainer {
namespace {

uint64_t GetLe(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

uint32_t Masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace

uint32_t BitwiseCrc32c(const std::string& data) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

absl::StatusOr<std::vector<tensorboard::Event>> ReadEvents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  std::vector<tensorboard::Event> events;
  size_t at = 0;
  for (int record = 1; at < bytes.size(); ++record) {
    const std::string where = absl::StrCat(path, ": record ", record, " at byte ", at);
    if (bytes.size() - at < 12) return absl::DataLossError(where + ": header cut short");
    const uint64_t length = GetLe(bytes, at, 8);
    if (Masked(BitwiseCrc32c(bytes.substr(at, 8))) != GetLe(bytes, at + 8, 4)) {
      return absl::DataLossError(where + ": length CRC mismatch");
    }
    if (bytes.size() - at - 12 < length + 4) return absl::DataLossError(where + ": data cut short");
    const std::string data = bytes.substr(at + 12, length);
    if (Masked(BitwiseCrc32c(data)) != GetLe(bytes, at + 12 + length, 4)) {
      return absl::DataLossError(where + ": data CRC mismatch");
    }
    tensorboard::Event e;
    if (!e.ParseFromString(data)) return absl::DataLossError(where + ": not an Event");
    events.push_back(std::move(e));
    at += 12 + length + 4;
  }
  return events;
}

std::vector<std::string> EventFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (absl::StartsWith(e->d_name, "events.out.tfevents.")) out.push_back(dir + "/" + e->d_name);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
