// The study journal, in Optuna 3.1's JournalStorage file format (JournalFileStorage): one JSON
// object per line, each an operation that Optuna replays in order, so that
//
//   optuna.load_study(study_name=NAME, storage=optuna.storages.JournalStorage(
//       optuna.storages.JournalFileStorage(PATH)))
//
// reads a tunefleet study: its direction, trials (number, state, value), params (lr, batch_size
// and any searched trainer key) with their distributions (Float, Int and Categorical, of numbers
// or of strings), intermediate values (keyed by samples seen), user attrs (lr_effective, phase,
// point, fail_reason, stderr_tail, placement) and system attrs (successive halving's and
// hyperband's completed_rung_N, RetryFailedTrialCallback's failed_trial / retry_history).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<JournalWriter> journal, JournalWriter::Open(path));
//   RETURN_IF_ERROR(journal->CreateStudy("sbert-stsb-lr", /*maximize=*/true));
//   RETURN_IF_ERROR(journal->CreateTrial(trial, space));        // trial.number == 0, 1, ...
//   RETURN_IF_ERROR(journal->SetIntermediateValue(trial.number, step, value));
//   RETURN_IF_ERROR(journal->Finish(trial));                     // COMPLETE / PRUNED / FAIL
//   ...
//   ASSIGN_OR_RETURN(JournalContents contents, ReadJournal(path));   // resume, `hpo best`
//
// Format contract (what Optuna 3.1 writes and reads):
// - Each line is `json.dumps` of {"op_code": N, "worker_id": W, <op fields>}: ", " and ": "
//   separators, ASCII only (ensure_ascii), floats as Python's repr (shortest round-trip text),
//   NaN / Infinity / -Infinity as bare tokens, datetimes as naive local time
//   isoformat(timespec="microseconds"), e.g. "2024-05-01T13:04:05.123456".
// - A line is written with a single write(2), so a crash can tear only the last line. Optuna
//   ignores an undecodable last line and fails on an undecodable line followed by others; Open
//   therefore cuts a torn tail before appending.
// - The journal holds one study; Optuna's trial_id then equals the trial number.
// - worker_id is "tunefleet-<pid>". Optuna's replay raises on bad operations only when they
//   were issued by its own worker (uuid4-thread); ours are foreign to it, so an operation on
//   a finished or unknown trial is silently ignored by Optuna (and by ReadJournal). The writer
//   refuses to write such operations instead.
//
// Thread-safety: a JournalWriter serializes its calls with an internal mutex, so it may be used
// from several threads. Only one JournalWriter may append to a journal at a time: Open takes an
// exclusive flock(2) on it and fails (FailedPrecondition) while another writer holds it.
// Readers (ReadJournal, Optuna) may read it concurrently and ignore a half-written last line.
// ReadJournal and the Json* helpers are thread-safe.
#ifndef TUNEFLEET_HPO_JOURNAL_H_
#define TUNEFLEET_HPO_JOURNAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

class JournalWriter {
 public:
  // Opens `path` for appending (O_APPEND), creating it, and its missing folders as
  // CheckJournalPath's rule allows (below).
  // A torn tail (a last line without '\n' that is not a complete JSON object, or a last line
  // that is not valid JSON) is truncated away (see dropped_bytes()); a complete operation that
  // only lacks its '\n' is kept and terminated, since Optuna and ReadJournal both apply it.
  // The existing operations are replayed to learn the study and its trials: an unreadable
  // journal (undecodable middle line, several studies) is an error naming file and line.
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Open(const std::string& path);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // CREATE_STUDY with "directions": [2] (maximize) or [1] (minimize); fsyncs. Fails when the
  // journal already holds a study (AlreadyExists for the same name).
  absl::Status CreateStudy(const std::string& study_name, bool maximize);
  // SET_STUDY_USER_ATTR; `json_value` is any JSON text (NaN / Infinity allowed).
  absl::Status SetStudyUserAttr(const std::string& key, const std::string& json_value);

  // CREATE_TRIAL (datetime_start = trial.datetime_start, or now when empty), then
  // SET_TRIAL_PARAM for each of trial.params with its distribution from `space`, then the user
  // attrs lr_effective, phase and point, then the system attrs failed_trial and retry_history
  // when trial.failed_trial is set, and the numeric trial.system_attrs. The trial is recorded
  // RUNNING; its state, value and intermediate values are written by the calls below.
  // trial.number must be the next trial number (0, 1, ...); params must lie in `space`.
  absl::Status CreateTrial(const Trial& trial, const SearchSpace& space);

  // Operations on a RUNNING trial (FailedPrecondition for an unknown or finished one).
  // SetSystemAttr is for numeric attrs (not failed_trial / retry_history); SetUserAttr checks
  // that lr_effective, phase, point, fail_reason, stderr_tail and placement have the types
  // Trial holds.
  absl::Status SetIntermediateValue(int64_t trial_number, int64_t step, double value);
  absl::Status SetSystemAttr(int64_t trial_number, const std::string& key, double value);
  absl::Status SetUserAttr(int64_t trial_number, const std::string& key,
                           const std::string& json_value);

  // Ends the trial: for FAIL, first the user attrs fail_reason and stderr_tail (each when
  // non-empty); then SET_TRIAL_STATE_VALUES with trial.state (COMPLETE, PRUNED or FAIL),
  // "values": [trial.value] for COMPLETE (required, and not NaN: Optuna records a NaN
  // objective as FAIL) else null, and datetime_complete = trial.datetime_complete or now;
  // then fsync.
  absl::Status Finish(const Trial& trial);

  const std::string& path() const { return path_; }
  // Bytes of torn tail that Open cut away (0 when the file ended cleanly).
  int64_t dropped_bytes() const { return dropped_bytes_; }
  // The number the next CreateTrial must use (the count of trials in the journal).
  int64_t next_trial_number() const;
  const std::string& worker_id() const { return worker_id_; }

 private:
  JournalWriter(std::string path, int fd);
  absl::Status Append(const std::string& line, bool sync);
  absl::Status CheckUpdatable(int64_t trial_number) const;
  std::string Begin(int op_code) const;  // "{\"op_code\": N, \"worker_id\": W"

  const std::string path_;
  const int fd_;
  const std::string worker_id_;
  int64_t dropped_bytes_ = 0;

  mutable std::mutex mu_;
  absl::Status broken_;  // a failed write: later appends would land after a torn line
  bool has_study_ = false;
  std::string study_name_;
  int64_t study_id_ = 0;
  int64_t next_study_id_ = 0;       // Optuna's study ids count deleted studies too
  int64_t total_trials_ = 0;        // Optuna's trial ids are global: len(_trials)
  std::vector<int64_t> trial_ids_;  // by trial number
  std::vector<bool> finished_;      // by trial number
};

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
absl::Status CheckJournalPath(const std::string& path);

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

// Python's json.dumps of a float: repr ("0.0001", "1e-05", "2.0"), "NaN", "Infinity",
// "-Infinity".
std::string JsonFloat(double value);
// Python's json.dumps of a str (ensure_ascii): quoted, \uXXXX escapes beyond ASCII; invalid
// UTF-8 bytes become U+FFFD.
std::string JsonString(std::string_view text);
// Re-serializes JSON text (NaN / Infinity / -Infinity accepted) as Python's json.dumps would,
// keeping key order; InvalidArgument when it is not valid JSON.
absl::StatusOr<std::string> NormalizeJson(std::string_view text);
// datetime.now().isoformat(timespec="microseconds"): naive local time.
std::string OptunaDatetimeNow();

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_JOURNAL_H_
