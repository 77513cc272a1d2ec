// Where a training run's model and checkpoints go (rank 0 alone writes them):
//   OUTPUT_DIR/model       the model to keep (output.save: the best evaluated one, or the last),
//                          a Hugging Face / sentence-transformers folder
//                          (trainer/model/hf_model_folder.h), with head.safetensors when the task
//                          has a head; for model.kind cross_encoder the transformers
//                          *ForSequenceClassification folder, head inside;
//   OUTPUT_DIR/checkpoint  the resumable state (trainer/train/train_state.h).
// The model and checkpoints reach the disk on a background thread (trainer/io/background_writer.h),
// from host copies of the state (trainer/io/host_snapshot.h), one write at a time; training goes on
// meanwhile. Stage() holds the model as it is now, to be written by the next Save(): a better
// model found before then replaces it unwritten. A checkpoint whose step is the staged model's
// reuses its copies. The run waits for the last write before it ends (Wait()).
// Thread-safety: one per training run, used from the training loop's thread.
#ifndef TUNEFLEET_TRAINER_TRAIN_MODEL_SAVER_H_
#define TUNEFLEET_TRAINER_TRAIN_MODEL_SAVER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "trainer/config/train_config.h"
#include "trainer/io/background_writer.h"
#include "trainer/io/host_snapshot.h"
#include "trainer/tasks/task_model.h"
#include "trainer/train/train_state.h"

namespace tunefleet {
namespace trainer {

class ModelSaver {
 public:
  // Writes under config.output.dir; the model folders take their tokenizer files from
  // config.model.path and name config.model.pooling and max_seq_len.
  explicit ModelSaver(const TrainerConfig& config);

  // Holds host copies of `model` at `step` to be written as OUTPUT_DIR/model by the next Save()
  // (first waiting for a write that may still read the previous copies).
  absl::Status Stage(TaskModel& model, int64_t step);
  // On the background writer: the staged model, if any, then, when `checkpoint` is set,
  // OUTPUT_DIR/checkpoint with that progress, `model`'s weights as they are now and
  // `optimizer_state` (AdamW's names; host copies of both). Waits only for the copies (and for
  // the write before, whose error it returns).
  absl::Status Save(TaskModel& model, const std::map<std::string, torch::Tensor>& optimizer_state,
                    std::optional<TrainProgress> checkpoint);
  // Waits for the write in flight; its status.
  absl::Status Wait();

  // Whether a staged model waits for Save(), and the step of the model staged last (-1: none).
  bool staged() const { return staged_; }
  int64_t staged_step() const { return staged_step_; }
  // Restarts the clock of SecondsSinceCheckpoint() (the loop's start).
  void StartCheckpointClock() { last_checkpoint_ = Clock::now(); }
  double SecondsSinceCheckpoint() const;
  // The seconds the calls above spent: host copies and waits for writes.
  double seconds() const { return seconds_; }

 private:
  using Clock = std::chrono::steady_clock;
  const TrainerConfig& c_;
  HostSnapshot model_encoder_, model_head_;                 // the staged model
  HostSnapshot encoder_copy_, head_copy_, optimizer_copy_;  // the checkpoint
  HostSnapshot::Tensors staged_encoder_, staged_head_;
  bool staged_ = false;  // not yet handed to the writer
  int64_t staged_step_ = -1;
  Clock::time_point last_checkpoint_ = Clock::now();
  double seconds_ = 0;
  BackgroundWriter writer_;  // after the buffers it reads: destroyed (waited for) first
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_MODEL_SAVER_H_
