// The "preflight" object of `trainer train --dry_run --json` (trainer/commands/train_dry_run.h):
// what a sweep would otherwise read itself before any trial starts, so that hpo links none of
// the trainer's readers (hpo/config/trainer_files.h, hpo/config/sweep_preflight.h):
//
//   {"model": {"key": "model.path", "path": "data/bert-tiny-random", "error": "",
//              "model_type": "bert", "parameters": 4385920},
//                          the model folder: config.json there, readable and of a known model
//                          family, and a tokenizer the trainer reads (tokenizer.json, vocab.txt
//                          or a .model); "error" is the first that fails ("" when none), the
//                          text hpo prints after "model.path: "; parameters: the encoder's,
//                          without its pooler (0 when config.json cannot be read)
//    "models": [{"path": "data/other-model", "error": ""}],
//                          the same check of every other model folder a --check names (a
//                          searched model.path), in the checks' order, each once
//    "least_tokens": 2,    the tokens a sequence of the least estimate
//    "memory": [{"batch": 32, "least_bytes": 1.2e8, "bytes": 3.9e8}]}
//                          per-rank batch sizes: the config's train.batch_size and those a
//                          --check sets, ascending; the trainer's memory estimate
//                          (trainer/model/memory_formula.h) of one rank at least_tokens tokens a
//                          sequence (a lower bound: a batch whose least does not fit a device
//                          cannot train there) and at the model's longest input (an upper bound
//                          under dynamic padding), with the config's precision, checkpointing
//                          and ZeRO-1 over world_size ranks; empty when config.json cannot be
//                          read
//
// Thread-safety: stateless (reads the file system).
#ifndef TUNEFLEET_TRAINER_COMMANDS_TRAIN_PREFLIGHT_H_
#define TUNEFLEET_TRAINER_COMMANDS_TRAIN_PREFLIGHT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {

// The object above for `config`, loaded from `path` with `overrides`; each of `checks`
// (KEY=VALUE) is loaded alone on top of them to find the other model folders and batch sizes it
// sets (a check the config refuses adds none). `world_size`: the ranks of a trial.
nlohmann::ordered_json TrainPreflightJson(const TrainerConfig& config, const std::string& path,
                                          const std::vector<std::string>& overrides,
                                          const std::vector<std::string>& checks,
                                          int64_t world_size);

// The model folder check above: "" when `dir` holds a config.json of a known family and a
// tokenizer the trainer reads, else why not (one line).
std::string ModelFolderError(const std::string& dir);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_TRAIN_PREFLIGHT_H_
