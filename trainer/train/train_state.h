// The resumable state of a training run, OUTPUT_DIR/checkpoint/:
//   the encoder as a Hugging Face model folder (config.json, model.safetensors, vocab.txt),
//   head.safetensors (classifier.weight / .bias, when the task has a head),
//   optimizer.safetensors (AdamW's moments and steps, adamw.h's names),
//   trainer_state.json (progress below, and the config's fingerprint).
// Saving writes checkpoint.tmp/ completely, then swaps it in with renames (the old one moves to
// checkpoint.old/ and is deleted last), so a crash at any point leaves a whole checkpoint under
// one of the two names; loading takes checkpoint/, else checkpoint.old/.
// Thread-safety: free functions; one writer per directory.
#ifndef TUNEFLEET_TRAINER_TRAIN_TRAIN_STATE_H_
#define TUNEFLEET_TRAINER_TRAIN_TRAIN_STATE_H_

#include <cstdint>
#include <map>
#include <string>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/model/bert_config.h"

namespace tunefleet {
namespace trainer {

struct TrainProgress {
  int64_t step = 0;            // optimizer steps done
  int64_t epoch = 0;           // the epoch the next batch belongs to
  int64_t batch_in_epoch = 0;  // the next batch's index in that epoch
  double best = 0.0;           // the best primary metric so far (NaN: none yet)
  int64_t best_step = -1;
  double loss_scale = 0.0;  // fp16 only
  int64_t scaler_good_steps = 0;
  int64_t scaler_skipped = 0;
  std::string fingerprint;  // what must match to resume (the data and the schedule)
};

struct TrainStateFiles {
  BertConfig config;
  std::map<std::string, torch::Tensor> encoder;  // BertModel names
  std::map<std::string, torch::Tensor> head;     // may be empty
  std::map<std::string, torch::Tensor> optimizer;
  TrainProgress progress;
};

// `output_dir`/checkpoint. `source_dir` supplies the tokenizer files.
absl::Status SaveTrainState(const std::string& output_dir, const TrainStateFiles& state,
                            const std::string& source_dir);
absl::StatusOr<TrainStateFiles> LoadTrainState(const std::string& output_dir);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_TRAIN_STATE_H_
