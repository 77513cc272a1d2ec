// The study journal's format: Optuna 3.1's JournalStorage file format (JournalFileStorage), one
// JSON object per line, each an operation that Optuna replays in order, so that
//
//   optuna.load_study(study_name=NAME, storage=optuna.storages.JournalStorage(
//       optuna.storages.JournalFileStorage(PATH)))
//
// reads a tunefleet study: its direction, trials (number, state, value), params (lr, batch_size
// and any searched trainer key) with their distributions (Float, Int and Categorical, of numbers
// or of strings), intermediate values (keyed by samples seen), user attrs (lr_effective, phase,
// point, fail_reason, stderr_tail, placement, worker) and system attrs (successive halving's and
// hyperband's completed_rung_N, RetryFailedTrialCallback's failed_trial / retry_history).
//
// JournalWriter (hpo/journal/journal_writer.h) appends operations; ReadJournal
// (hpo/journal/journal_replay.h) replays them as Optuna does; hpo/journal/journal_file.h says which
// paths may name a journal.
//
// Format contract (what Optuna 3.1 writes and reads):
// - Each line is `json.dumps` of {"op_code": N, "worker_id": W, <op fields>}: ", " and ": "
//   separators, ASCII only (ensure_ascii), floats as Python's repr (shortest round-trip text),
//   NaN / Infinity / -Infinity as bare tokens (common/py_json.h), datetimes as naive local time
//   isoformat(timespec="microseconds"), e.g. "2024-05-01T13:04:05.123456".
// - A line is written with a single write(2), so a crash can tear only the last line. Optuna
//   ignores an undecodable last line and fails on an undecodable line followed by others;
//   JournalWriter::Open therefore cuts a torn tail before appending.
// - The journal holds one study; Optuna's trial_id then equals the trial number.
// - worker_id is "tunefleet-<pid>". Optuna's replay raises on bad operations only when they
//   were issued by its own worker (uuid4-thread); ours are foreign to it, so an operation on
//   a finished or unknown trial is silently ignored by Optuna (and by ReadJournal). The writer
//   refuses to write such operations instead.
//
// Thread-safety: constants and pure functions.
#ifndef TUNEFLEET_HPO_JOURNAL_JOURNAL_FORMAT_H_
#define TUNEFLEET_HPO_JOURNAL_JOURNAL_FORMAT_H_

#include <string>

namespace tunefleet {
namespace hpo {

// Optuna 3.1's JournalOperation: a line's "op_code" (JournalOp::kCreateStudy, ...; plain ints, as
// the lines hold them).
struct JournalOp {
  enum Code : int {
    kCreateStudy = 0,
    kDeleteStudy = 1,
    kSetStudyUserAttr = 2,
    kSetStudySystemAttr = 3,
    kCreateTrial = 4,
    kSetTrialParam = 5,
    kSetTrialStateValues = 6,
    kSetTrialIntermediateValue = 7,
    kSetTrialUserAttr = 8,
    kSetTrialSystemAttr = 9,
  };
};

// Optuna's StudyDirection, as CREATE_STUDY's "directions" holds it.
inline constexpr int kDirectionMinimize = 1;
inline constexpr int kDirectionMaximize = 2;

// datetime.now().isoformat(timespec="microseconds"): naive local time.
std::string OptunaDatetimeNow();
// Whether `s` has that form: YYYY-MM-DDTHH:MM:SS.ffffff.
bool IsOptunaDatetime(const std::string& s);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_JOURNAL_JOURNAL_FORMAT_H_
