// Reading a study journal (hpo/journal/journal_format.h) as Optuna 3.1's JournalStorageReplayResult
// replays it: `hpo status`, `hpo best`, resuming a sweep, and JournalWriter::Open learning
// where to go on.
//
//   ASSIGN_OR_RETURN(JournalContents contents, ReadJournal(path));
//
// Thread-safety: pure functions of the file's bytes; readers may run while a JournalWriter
// appends (a half-written last line is ignored, as Optuna ignores it).
#ifndef TUNEFLEET_HPO_JOURNAL_JOURNAL_REPLAY_H_
#define TUNEFLEET_HPO_JOURNAL_JOURNAL_REPLAY_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// What a journal holds, as Optuna's JournalStorageReplayResult replays it.
struct JournalContents {
  std::string study_name;  // empty when the journal holds no study (e.g. an empty file)
  bool maximize = true;
  Study study;                                          // trials[i].number == i
  std::map<std::string, std::string> study_user_attrs;  // key -> raw JSON (Python's dumps)
  int64_t operations = 0;                               // decoded lines (Optuna's log_number_read)
  // distributions[i]: trial i's param distributions as recorded in the journal.
  std::vector<SearchSpace> distributions;
};

// Replays `path` exactly as Optuna 3.1 does for the operations tunefleet uses: operations on a
// finished or unknown trial are ignored, a later SET_TRIAL_PARAM whose distribution is
// incompatible with an earlier trial's is ignored, an undecodable last line is ignored, an
// undecodable line followed by others is an error. Params come back in external form (the
// choice for categoricals). Errors name the file and line ("PATH:LINE: ..."); a missing file is
// NotFound; a folder is InvalidArgument ("is a folder, not a journal file"); a journal with
// more than one study is an error ("holds several studies").
absl::StatusOr<JournalContents> ReadJournal(const std::string& path);

// Optuna's ids after replaying a journal: what JournalWriter::Open needs to go on appending.
struct JournalIds {
  int64_t next_study_id = 0;  // Optuna's study ids count deleted studies too
  int64_t total_trials = 0;   // Optuna's trial ids are global: len(_trials)
  bool has_study = false;
  int64_t study_id = 0;
  std::string study_name;
  std::vector<int64_t> trial_ids;  // by trial number
  std::vector<bool> finished;      // by trial number
};

// Replays `content`, the text of the journal at `path` (which names it in errors), as
// ReadJournal does; an error for an undecodable middle line, a malformed operation, or several
// studies.
absl::StatusOr<JournalIds> ReplayJournalIds(const std::string& path, std::string_view content);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_JOURNAL_JOURNAL_REPLAY_H_
