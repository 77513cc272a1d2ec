// What hpo asks the trainer before a sweep, instead of linking its readers: one run of
//
//   trainer train --config TRAIN.yaml --dry_run --json [--check KEY=VALUE ...] OVERRIDES...
//
// with WORLD_SIZE set to the trial's ranks (trainer/commands/train_dry_run.h has the JSON), once
// per sweep (LoadSweepConfig; and once before, without checks, for the trainer's keys when a
// parameter names one: ReadSweepFile): the training data's samples per epoch (the resource axis of
// Hyperband and the evaluation cadence), the trainer's resolved keys (the grad_accum of lr
// scaling), the files hpo checks (hpo/config/trainer_files.h), the model folder's check and the
// memory estimate per batch size (dev mode's memory check, TrialSpec.memory_mib:
// hpo/config/sweep_preflight.h), and its verdict on each searched value
// (hpo/config/sweep_parameters.h CheckParametersWithTrainer).
// Thread-safety: stateless; an AskTrainer may be called from one thread at a time.
#ifndef TUNEFLEET_HPO_CONFIG_TRAINER_QUERY_H_
#define TUNEFLEET_HPO_CONFIG_TRAINER_QUERY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace hpo {

struct TrainerQuery {
  std::string config;                  // the trainer YAML
  std::vector<std::string> overrides;  // the sweep's trainer.overrides, key=value
  std::vector<std::string> checks;     // key=value, each tried alone on top of the overrides
  int64_t world_size = 1;              // ranks per trial
};

// A file or folder the trainer config names that must exist where the trials run (the dry run's
// "files").
struct TrainerFile {
  std::string key;   // "model.path"
  std::string path;  // as written
  bool folder = false;
};

// Per-rank batch size: the trainer's memory estimate of one rank, in bytes.
struct BatchMemory {
  double least_bytes = 0;  // at least_tokens tokens a sequence: a lower bound
  double bytes = 0;        // at the model's longest input: an upper bound
};

// What the trainer read for hpo before a sweep: the files to check and the dry run's "preflight"
// (trainer/commands/train_preflight.h).
struct TrainerPreflight {
  std::vector<TrainerFile> files;
  std::string model_key;    // the key of the model folder ("model.path")
  std::string model_path;   // the config's model folder
  std::string model_error;  // why the trainer cannot read it ("" when it can)
  int64_t parameters = 0;   // the encoder's; 0 when its config.json cannot be read
  // Every other model folder the checks named (a searched model.path): path -> error or "".
  std::map<std::string, std::string> other_models;
  int64_t least_tokens = 2;
  // Per batch size the trainer estimated (the config's and each checked one); empty when the
  // model cannot be read here.
  std::map<int64_t, BatchMemory> memory;
};

struct TrainerAnswer {
  int64_t world_size = 1;
  int64_t train_examples = 0;
  // Padded to a multiple of world_size; 0 when the data cannot be read here (data_error says
  // why: it may exist only where the trials run).
  int64_t samples_per_epoch = 0;
  std::string data_error;
  // Every trainer key with its resolved value: a string as it is, anything else as JSON text
  // ("3e-05", "true", "[0,1]").
  std::map<std::string, std::string> keys;
  std::vector<std::string> key_names;  // the keys in the trainer's order
  // Per check, in order: the override and the trainer's error ("" when it accepts it).
  std::vector<std::pair<std::string, std::string>> checks;
  TrainerPreflight preflight;
};

// Answers `query` with the trainer's JSON; a config the trainer refuses is InvalidArgument with
// the trainer's own line ("FILE:LINE: KEY: ..."); a trainer that cannot be run or answers
// otherwise is FailedPrecondition naming it.
using AskTrainer = std::function<absl::StatusOr<std::string>(const TrainerQuery& query)>;

// Runs `binary` (`trainer`), or when empty the trainer beside hpo (common/binary_path.h).
AskTrainer TrainerBinary(const std::string& binary = "");

absl::StatusOr<TrainerAnswer> ParseTrainerAnswer(const std::string& json);

// Asks and parses.
absl::StatusOr<TrainerAnswer> QueryTrainer(const AskTrainer& ask, const TrainerQuery& query);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_TRAINER_QUERY_H_
