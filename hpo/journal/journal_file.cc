#include "hpo/journal/journal_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clip.h"
#include "common/file_util.h"
#include "common/safe_path.h"

namespace tunefleet {
namespace hpo {
namespace {

absl::Status FolderError(const std::string& path) {
  std::string example = path;
  while (example.size() > 1 && example.back() == '/') example.pop_back();
  return absl::InvalidArgumentError(absl::StrCat("journal ", ClipPath(path),
                                                 " is a folder, not a journal file (name a file, "
                                                 "e.g. ",
                                                 ClipPath(example), "/journal.log)"));
}

absl::Status PrepareJournalFolder(const std::string& path, bool create) {
  if (path.empty()) return absl::InvalidArgumentError("the journal path is empty");
  if (IsDir(path) || path.back() == '/') return FolderError(path);
  const std::string parent = JournalFolder(path);
  struct stat st;
  if (::stat(parent.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat("journal ", ClipPath(path), ": ", ClipPath(parent), " is not a folder"));
    }
    return absl::OkStatus();
  }
  // The folders from the first one named to the journal's own, and whether the path may
  // climb out of the working directory.
  std::vector<std::string> prefixes;
  bool climbs = path[0] == '/';
  for (size_t i = path[0] == '/' ? 1 : 0; i <= parent.size(); ++i) {
    if (i == parent.size() || parent[i] == '/') {
      const std::string prefix = parent.substr(0, i);
      const size_t start = prefix.rfind('/') == std::string::npos ? 0 : prefix.rfind('/') + 1;
      if (prefix.compare(start, std::string::npos, "..") == 0) climbs = true;
      if (!prefix.empty() && (prefixes.empty() || prefixes.back() != prefix)) {
        prefixes.push_back(prefix);
      }
    }
  }
  // The first missing folder; an absolute (or climbing) path may miss only the last one.
  size_t first_missing = prefixes.size();
  for (size_t i = 0; i < prefixes.size(); ++i) {
    if (!IsDir(prefixes[i])) {
      first_missing = i;
      break;
    }
  }
  if (first_missing == prefixes.size()) return absl::OkStatus();  // raced: it exists now
  if (climbs && first_missing + 1 < prefixes.size()) {
    return absl::NotFoundError(absl::StrCat(
        "journal ", ClipPath(path), ": no such folder: ", ClipPath(prefixes[first_missing]),
        " (hpo creates only the journal's own folder of an absolute path)"));
  }
  if (!create) return absl::OkStatus();
  // The rule allows the missing folders; MakeSafeDirs creates them (and checks the others).
  if (absl::Status made = MakeSafeDirs(parent); !made.ok()) {
    return absl::Status(made.code(), absl::StrCat("journal: ", made.message()));
  }
  return absl::OkStatus();
}

// Where the journal's folders exist: none another user planted (common/safe_path.h), and no
// link in the journal's place.
absl::Status CheckJournalSafety(const std::string& path) {
  if (absl::Status safe = CheckSafePath(path); !safe.ok()) {
    return absl::Status(safe.code(), absl::StrCat("journal: ", safe.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckJournalPath(const std::string& path) {
  if (absl::Status s = PrepareJournalFolder(path, /*create=*/false); !s.ok()) return s;
  return CheckJournalSafety(path);
}

absl::Status MakeJournalFolders(const std::string& path) {
  if (absl::Status s = PrepareJournalFolder(path, /*create=*/false); !s.ok()) return s;
  if (absl::Status s = CheckJournalSafety(path); !s.ok()) return s;
  return PrepareJournalFolder(path, /*create=*/true);
}

std::string RunDir(const std::string& journal) {
  std::string dir = JournalFolder(journal);
  if (dir == ".") dir.clear();
  if (!dir.empty() && dir[0] == '/') return dir;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return dir.empty() ? "." : dir;
  return dir.empty() ? std::string(cwd) : absl::StrCat(cwd, "/", dir);
}

std::string JournalFolder(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::StatusOr<std::string> ReadJournalFile(const std::string& path) {
  if (IsDir(path)) return FolderError(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string message =
        absl::StrCat(ClipPath(path), ": cannot open journal: ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::InternalError(message);
  }
  absl::StatusOr<std::string> content = ReadJournalFd(fd, path);
  ::close(fd);
  return content;
}

absl::StatusOr<std::string> ReadJournalFd(int fd, const std::string& path) {
  std::string out;
  char buf[1 << 16];
  off_t offset = 0;
  while (true) {
    const ssize_t n = ::pread(fd, buf, sizeof(buf), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat(path, ": read failed: ", std::strerror(errno)));
    }
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    offset += n;
  }
}

}  // namespace hpo
}  // namespace tunefleet
