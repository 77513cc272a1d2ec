// Appending a study to its journal (hpo/journal/journal_format.h has the format and its contract):
//
//   ASSIGN_OR_RETURN(std::unique_ptr<JournalWriter> journal, JournalWriter::Open(path));
//   RETURN_IF_ERROR(journal->CreateStudy("sbert-stsb-lr", /*maximize=*/true));
//   RETURN_IF_ERROR(journal->CreateTrial(trial, space));        // trial.number == 0, 1, ...
//   RETURN_IF_ERROR(journal->SetIntermediateValue(trial.number, step, value));
//   RETURN_IF_ERROR(journal->Finish(trial));                     // COMPLETE / PRUNED / FAIL
//   ...
//   ASSIGN_OR_RETURN(JournalContents contents, ReadJournal(path));  // journal_replay.h
//
// Each operation is one line written with a single write(2); CreateStudy and Finish fsync.
// The writer refuses operations that Optuna would silently ignore (on an unknown or finished
// trial).
//
// Thread-safety: a JournalWriter serializes its calls with an internal mutex, so it may be used
// from several threads. Only one JournalWriter may append to a journal at a time: Open takes an
// exclusive flock(2) on it and fails (FailedPrecondition) while another writer holds it.
// Readers (ReadJournal, Optuna) may read it concurrently and ignore a half-written last line.
#ifndef TUNEFLEET_HPO_JOURNAL_JOURNAL_WRITER_H_
#define TUNEFLEET_HPO_JOURNAL_JOURNAL_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hpo/journal/trial_user_attrs.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

class JournalWriter {
 public:
  // Opens `path` for appending (O_APPEND), creating it, and its missing folders as
  // CheckJournalPath's rule allows (hpo/journal/journal_file.h).
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
  // attrs written at creation (hpo/journal/trial_user_attrs.h: lr_effective, phase and point),
  // then the system attrs failed_trial and retry_history
  // when trial.failed_trial is set, and the numeric trial.system_attrs. The trial is recorded
  // RUNNING; its state, value and intermediate values are written by the calls below.
  // trial.number must be the next trial number (0, 1, ...); params must lie in `space`.
  absl::Status CreateTrial(const Trial& trial, const SearchSpace& space);

  // Operations on a RUNNING trial (FailedPrecondition for an unknown or finished one).
  // SetSystemAttr is for numeric attrs (not failed_trial / retry_history); SetUserAttr checks
  // that the user attrs Trial holds (hpo/journal/trial_user_attrs.h) have their types.
  absl::Status SetIntermediateValue(int64_t trial_number, int64_t step, double value);
  absl::Status SetSystemAttr(int64_t trial_number, const std::string& key, double value);
  absl::Status SetUserAttr(int64_t trial_number, const std::string& key,
                           const std::string& json_value);
  // The user attr that fills `member` (hpo/journal/trial_user_attrs.h), its value `trial`'s.
  absl::Status SetUserAttr(const Trial& trial, UserAttrMember member);

  // Ends the trial: for FAIL, first the user attrs written at failure (fail_reason and
  // stderr_tail, each when non-empty); then SET_TRIAL_STATE_VALUES with trial.state (COMPLETE,
  // PRUNED or FAIL), "values": [trial.value] for COMPLETE (required, and not NaN: Optuna records a
  // NaN objective as FAIL) else null, and datetime_complete = trial.datetime_complete or now; then
  // fsync.
  absl::Status Finish(const Trial& trial);

  const std::string& path() const { return path_; }
  // Bytes of torn tail that Open cut away (0 when the file ended cleanly).
  int64_t dropped_bytes() const { return dropped_bytes_; }
  // The number the next CreateTrial must use (the count of trials in the journal).
  int64_t next_trial_number() const;
  const std::string& worker_id() const { return worker_id_; }

 private:
  JournalWriter(std::string path, int fd);
  // Cuts a torn last line away, or terminates a complete one (Open); `content` follows.
  absl::Status RepairTail(std::string* content) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Append(const std::string& line, bool sync) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckUpdatable(int64_t trial_number) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string Begin(int op_code) const;  // "{\"op_code\": N, \"worker_id\": W"
  // One SET_TRIAL_USER_ATTR / SET_TRIAL_SYSTEM_ATTR line: {"KEY": value_json}.
  std::string AttrLine(int op_code, int64_t trial_id, const std::string& key,
                       const std::string& value_json) const;

  const std::string path_;
  const int fd_;
  const std::string worker_id_;
  int64_t dropped_bytes_ = 0;  // set by Open, then read-only

  mutable absl::Mutex mu_;
  // A failed write: later appends would land after a torn line.
  absl::Status broken_ ABSL_GUARDED_BY(mu_);
  bool has_study_ ABSL_GUARDED_BY(mu_) = false;
  std::string study_name_ ABSL_GUARDED_BY(mu_);
  int64_t study_id_ ABSL_GUARDED_BY(mu_) = 0;
  // Optuna's study ids count deleted studies too.
  int64_t next_study_id_ ABSL_GUARDED_BY(mu_) = 0;
  // Optuna's trial ids are global: len(_trials).
  int64_t total_trials_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> trial_ids_ ABSL_GUARDED_BY(mu_);  // by trial number
  std::vector<bool> finished_ ABSL_GUARDED_BY(mu_);      // by trial number
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_JOURNAL_JOURNAL_WRITER_H_
