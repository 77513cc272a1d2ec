#include "tests/test_util/temp_dir.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/file_util.h"
#include "gtest/gtest.h"

namespace tunefleet {

std::string TestTempPath(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  return JoinPath(base != nullptr && *base != '\0' ? base : "/tmp", name);
}

std::string FreshTestDir(const std::string& name) {
  const std::string dir = TestTempPath(name);
  if (absl::Status s = RemoveTree(dir); !s.ok()) ADD_FAILURE() << s;
  if (absl::Status s = MakeDirs(dir); !s.ok()) ADD_FAILURE() << s;
  return dir;
}

ShortTempDir::ShortTempDir(const std::string& prefix) {
  std::string pattern = "/tmp/tf-" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << pattern << ": mkdtemp: " << std::strerror(errno);
    return;
  }
  path_ = pattern;
}

ShortTempDir::~ShortTempDir() {
  if (path_.empty()) return;
  if (absl::Status s = RemoveTree(path_); !s.ok()) ADD_FAILURE() << s;
}

}  // namespace tunefleet
