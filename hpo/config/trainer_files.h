// The files a sweep's trainer config names, checked before any trial starts (`hpo sweep` and
// its --dry_run), without loading them (stat and access(2) only). The trainer lists them in its
// dry run ("files", hpo/config/trainer_query.h TrainerFile: model.path a folder; task.train,
// task.eval, task.eval_queries, task.eval_corpus, task.eval_qrels and model.head files, the set
// ones), each of which must exist and be readable; the model folder must also hold what the
// trainer reads (its "preflight": config.json of a known model family and a tokenizer,
// trainer/commands/train_preflight.h). Relative paths are taken from the working directory, as
// the trainer takes them. A searched parameter over one of these keys (`model.path: {values:
// [A, B]}`) has each of its values checked the same way (the model folder's check is the
// trainer's, of each value the sweep asked it about; a key the config leaves unset is not
// listed, so its searched values are left to the trials). A missing one is one line naming the
// key and the path:
//
//   configs/lr.yaml: trainer config configs/sbert_stsb.yaml: model.path: data/nope: no such folder
//
// The synthetic trainer names no files, nor does a program (hpo/config/program_config.h
// CheckProgramHere): nothing to check. Thread-safety: stateless.
#ifndef TUNEFLEET_HPO_CONFIG_TRAINER_FILES_H_
#define TUNEFLEET_HPO_CONFIG_TRAINER_FILES_H_

#include "absl/status/status.h"
#include "hpo/config/sweep_config.h"
#include "hpo/config/trainer_query.h"

namespace tunefleet {
namespace hpo {

// The first missing or unreadable file the trainer listed, in its order, as "KEY: PATH: what is
// wrong" (InvalidArgument), or the model folder's own error ("KEY: " and the trainer's line);
// OK when all are there.
absl::Status CheckTrainerFiles(const TrainerPreflight& preflight);

// For a sweep loaded by LoadSweepConfig: checks the files of its trainer config as the trainer
// resolved it with the sweep's trainer overrides (TrainerSpec::preflight) and the searched values
// of those keys; the error names the sweep file and the trainer config. OK for the synthetic
// trainer and a program.
absl::Status CheckSweepTrainerFiles(const SweepConfig& sweep);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_TRAINER_FILES_H_
