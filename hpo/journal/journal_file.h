// The journal's file (hpo/journal/journal_format.h has its contents): which paths may name a
// journal, the folders hpo may create for one, and reading it whole. Errors are one line naming the
// path (clipped, common/clip.h). Thread-safety: stateless (the file system is shared).
#ifndef TUNEFLEET_HPO_JOURNAL_JOURNAL_FILE_H_
#define TUNEFLEET_HPO_JOURNAL_JOURNAL_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace hpo {

// Whether `path` can name a journal, and which of its folders hpo may create (JournalWriter::
// Open creates them; this only checks, so `hpo sweep` can refuse a bad --journal before
// anything starts):
// - `path` must name a file: an existing folder (or a path ending in '/') is InvalidArgument
//   "journal DIR is a folder, not a journal file".
// - A relative path: its missing folders are created below the working directory
//   (runs/NAME/journal.log creates runs/ and runs/NAME/).
// - An absolute path (or a relative one that climbs out with ".."): only the journal's own
//   folder may be created, and only when its parent exists; otherwise NotFound, one line naming
//   the first missing folder: "journal /nonexistent/dir/j.log: no such folder: /nonexistent".
//   Nothing is created outside what the user named.
// - Where another user could have planted something (common/safe_path.h's rule): a folder on
//   the way, or the journal itself, in a folder other users can write and not sticky, or
//   another user's in a sticky one, and a symbolic link in the journal's place, are
//   PermissionDenied, one line naming the path ("journal: /tmp/s/j.log: is a symbolic link;
//   refusing to write through it").
absl::Status CheckJournalPath(const std::string& path);
// CheckJournalPath, then creates the missing folders that its rule allows (mode 0777 less the
// umask, by common/safe_path.h's rule).
absl::Status MakeJournalFolders(const std::string& path);

// The folder holding the journal: "a/b/j.log" -> "a/b", "j.log" -> ".", "/j.log" -> "/".
std::string JournalFolder(const std::string& path);
// That folder, absolute (against the working directory): where a sweep keeps its files, and
// trial N's trainer output (output.dir) is RunDir(journal)/trial-N.
std::string RunDir(const std::string& journal);

// The whole journal at `path`: InvalidArgument when it is a folder ("is a folder, not a journal
// file"), NotFound when it is missing ("PATH: cannot open journal: ...").
absl::StatusOr<std::string> ReadJournalFile(const std::string& path);
// The whole file open as `fd` (read with pread from offset 0; `path` names it in errors).
absl::StatusOr<std::string> ReadJournalFd(int fd, const std::string& path);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_JOURNAL_JOURNAL_FILE_H_
