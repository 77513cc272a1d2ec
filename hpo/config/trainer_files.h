// The files a sweep's trainer config names, checked before any trial starts (`hpo sweep` and
// its --dry_run), without loading them (stat and access(2) only):
//
//   model.path   a folder holding config.json and vocab.txt
//   task.train   a file
//   task.eval    a file, when set (and task.eval_queries, task.eval_corpus, task.eval_qrels)
//   model.head   a file, when set
//
// each existing and readable. Relative paths are taken from the working directory, as the
// trainer takes them. A searched parameter over one of these keys (`model.path: {values: [A,
// B]}`) has each of its values checked the same way. A missing one is one line naming the key
// and the path:
//
//   configs/lr.yaml: trainer config configs/sbert_stsb.yaml: model.path: data/nope: no such folder
//
// The synthetic trainer names no files, nor does a program (hpo/config/program_config.h
// CheckProgramHere): nothing to check. Thread-safety: stateless.
#ifndef TUNEFLEET_HPO_CONFIG_TRAINER_FILES_H_
#define TUNEFLEET_HPO_CONFIG_TRAINER_FILES_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "hpo/config/sweep_config.h"

namespace tunefleet {
namespace hpo {

// The first missing or unreadable file of a trainer config's resolved `keys` (model.path,
// task.train, and task.eval and model.head when set), as "KEY: PATH: what is wrong"
// (InvalidArgument); OK when all are there.
absl::Status CheckTrainerFiles(const std::map<std::string, std::string>& keys);

// For a sweep loaded by LoadSweepConfig: checks the files of its trainer config as the trainer
// resolved it with the sweep's trainer overrides (TrainerSpec::keys) and the searched values of
// those keys; the error names the sweep file and the trainer config. OK for the synthetic
// trainer and a program.
absl::Status CheckSweepTrainerFiles(const SweepConfig& sweep);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_TRAINER_FILES_H_
