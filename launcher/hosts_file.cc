#include "launcher/hosts_file.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/clip.h"
#include "common/name_chars.h"

namespace tunefleet {
namespace launcher {
namespace {

bool ValidHost(const std::string& host) {
  return !host.empty() && host.size() <= 255 && AllAlnumOr(host, "-._:@[]") &&
         host.front() != '-' && host.front() != '.';
}

}  // namespace

std::string AgentNameOf(const std::string& host) {
  const size_t at = host.find('@');
  return at == std::string::npos ? host : host.substr(at + 1);
}

absl::StatusOr<std::vector<HostEntry>> ParseHostsFile(const std::string& text,
                                                      const std::string& name) {
  std::vector<HostEntry> hosts;
  std::map<std::string, int> seen;  // host -> line
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const int line_no = static_cast<int>(i) + 1;
    auto error = [&](const std::string& message) {
      return absl::InvalidArgumentError(absl::StrCat(name, ":", line_no, ": ", message));
    };
    std::string line = lines[i];
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::vector<std::string> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    HostEntry entry;
    entry.host = fields[0];
    entry.line = line_no;
    if (entry.host.find('=') != std::string::npos) {
      return error("expected HOST [slots=N], the host comes first");
    }
    if (!ValidHost(entry.host)) {
      return error(absl::StrCat("'", ClipValue(entry.host),
                                "' is not a host name or address (expected HOST [slots=N])"));
    }
    bool have_slots = false;
    for (size_t f = 1; f < fields.size(); ++f) {
      const std::string& field = fields[f];
      const size_t eq = field.find('=');
      if (eq == std::string::npos) {
        return error(absl::StrCat("unexpected '", ClipValue(field), "' (expected HOST [slots=N])"));
      }
      const std::string key = field.substr(0, eq);
      const std::string value = field.substr(eq + 1);
      if (key != "slots") {
        return error(
            absl::StrCat("unknown option '", ClipValue(key), "' (only slots=N is understood)"));
      }
      if (have_slots) return error("slots given twice");
      have_slots = true;
      int64_t slots = 0;
      if (!absl::SimpleAtoi(value, &slots)) {
        return error(
            absl::StrCat("slots must be a positive integer, got '", ClipValue(value), "'"));
      }
      if (slots < 1 || slots > 4096) {
        return error(absl::StrCat("slots must be between 1 and 4096, got ", slots));
      }
      entry.slots = static_cast<int>(slots);
    }
    auto [it, inserted] = seen.emplace(entry.host, line_no);
    if (!inserted) {
      return error(absl::StrCat("duplicate host '", ClipValue(entry.host), "' (first on line ",
                                it->second, ")"));
    }
    hosts.push_back(entry);
  }
  if (hosts.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ":1: no hosts listed"));
  }
  return hosts;
}

absl::StatusOr<std::vector<HostEntry>> LoadHostsFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a folder, not a hosts file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseHostsFile(buffer.str(), path);
}

}  // namespace launcher
}  // namespace tunefleet
