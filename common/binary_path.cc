#include "common/binary_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace {

bool IsExecutable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return buf;
}

absl::StatusOr<std::string> FindSiblingBinary(const std::string& target) {
  const size_t slash = target.rfind('/');
  const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  std::vector<std::string> candidates;
  if (const char* dir = std::getenv("TUNEFLEET_BIN_DIR"); dir != nullptr && *dir != '\0') {
    candidates.push_back(absl::StrCat(dir, "/", name));
  }
  const std::string self = SelfPath();
  if (!self.empty()) {
    candidates.push_back(absl::StrCat(self, ".runfiles/tunefleet/", target));
    if (const char* runfiles = std::getenv("RUNFILES_DIR"); runfiles != nullptr) {
      candidates.push_back(absl::StrCat(runfiles, "/tunefleet/", target));
    }
    // bazel-bin/<pkg>/<binary>: two levels up from self is bazel-bin when self's package is one
    // folder deep (hpo/hpo, launcher/agent); try up to three.
    std::string dir = Dirname(self);
    for (int up = 0; up < 3; ++up) {
      dir = Dirname(dir);
      candidates.push_back(absl::StrCat(dir, "/", target));
    }
    candidates.push_back(absl::StrCat(Dirname(self), "/", name));
  }
  for (const std::string& c : candidates) {
    if (IsExecutable(c)) return c;
  }
  return absl::NotFoundError(absl::StrCat("cannot find the ", name, " binary (looked in ",
                                          absl::StrJoin(candidates, ", "),
                                          "); set TUNEFLEET_BIN_DIR"));
}

}  // namespace tunefleet
