// Temporary paths for the C++ tests, made one way everywhere.
//
//   const std::string dir = FreshTestDir("content_hash_tree");  // empty, under TEST_TMPDIR
//   ShortTempDir sockets("endpoint");   // /tmp/tf-endpoint-XXXXXX, removed at scope exit
//   const std::string ipc = "ipc://" + JoinPath(sockets.path(), "head.sock");
//
// Bazel gives each test a TEST_TMPDIR under its output base; its paths can be longer than a Unix
// socket's path may be (108 bytes with the terminating NUL), so sockets go in a ShortTempDir.
// Thread-safety: stateless functions; one ShortTempDir per owner.
#ifndef TUNEFLEET_TESTS_TEST_UTIL_TEMP_DIR_H_
#define TUNEFLEET_TESTS_TEST_UTIL_TEMP_DIR_H_

#include <string>

namespace tunefleet {

// "$TEST_TMPDIR/NAME" (or "/tmp/NAME" outside Bazel); nothing is created or removed.
std::string TestTempPath(const std::string& name);

// TestTempPath(name) as a fresh empty folder: removed with its contents if it exists, then
// created (mkdir -p). A failure is a test failure (ADD_FAILURE) naming the path.
std::string FreshTestDir(const std::string& name);

// A new private folder /tmp/tf-PREFIX-XXXXXX (mkdtemp: mode 0700), removed with everything in it
// when the object goes away. Keep PREFIX short. If mkdtemp fails the test fails and path() is
// empty.
class ShortTempDir {
 public:
  explicit ShortTempDir(const std::string& prefix);
  ~ShortTempDir();
  ShortTempDir(const ShortTempDir&) = delete;
  ShortTempDir& operator=(const ShortTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_TEST_UTIL_TEMP_DIR_H_
