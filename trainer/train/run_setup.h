// Building a training run (trainer/train/train_loop.h) from the trainer YAML before its loop: the
// precision and task, the tokenizer and encoder of model.path (with model.dropout), the
// training and evaluation data, the task model with its head, the step counts and the
// schedules; and, for --resume, the checkpoint to continue from.
//
// Step counts (train_loop.h's rule): shard = ceil(n / world) examples per rank and epoch,
// ceil(shard / batch_size) batches an epoch, ceil(batches / grad_accum) steps an epoch, and
// train.max_steps (> 0) or train.epochs of them in all; with task.datasets, each dataset's steps
// (trainer/data/multi_dataset_sampler.h): their sum (proportional) or the fewest times the
// number of datasets (round_robin).
// Errors are one line: bad settings name the YAML file (config.source) and the key, bad input
// the file (model folder, data, head).
// Thread-safety: free functions; call from one thread.
#ifndef TUNEFLEET_TRAINER_TRAIN_RUN_SETUP_H_
#define TUNEFLEET_TRAINER_TRAIN_RUN_SETUP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "trainer/config/train_config.h"
#include "trainer/data/multi_dataset_sampler.h"
#include "trainer/data/task_data.h"
#include "trainer/model/autocast.h"
#include "trainer/optim/lr_schedule.h"
#include "trainer/tasks/evaluator.h"
#include "trainer/tasks/task.h"
#include "trainer/tasks/task_model.h"
#include "trainer/train/eval_schedule.h"
#include "trainer/train/train_state.h"

namespace tunefleet {
namespace trainer {

// One training set: task.train's (name "") or an entry of task.datasets, with its own task (its
// loss and settings) and data.
struct TrainSet {
  std::string name;
  TaskPtr task;
  std::unique_ptr<TaskData> data;
};

// What a run's configuration and data determine.
struct RunParts {
  Precision precision = Precision::kFp32;
  // task.type's, from the loss registry (trainer/tasks/loss_registry.h): the evaluation's (with
  // task.datasets, task.type is the first dataset's unless the YAML names it).
  TaskPtr task;
  // The training sets, in order: task.train's alone (its task is `task`), or task.datasets'.
  // With several, every loss has a head (a cross-encoder's, shared) or none does, and the model
  // is built with the first one's task (TaskModelImpl::set_task switches it per step).
  std::vector<TrainSet> datasets;
  // Each dataset's batches and steps an epoch, for train.multi_dataset_sampler.
  EpochShape shape;
  // Null without task.eval (nor, for task.eval_kind retrieval, task.eval_queries).
  std::unique_ptr<EvalSet> eval;
  // On the CPU, seeded by train.seed, the head loaded from model.head when set.
  TaskModel model{nullptr};
  int64_t max_len = 0;  // model.max_seq_len, at most the encoder's positions
  int64_t steps_per_epoch = 0;
  int64_t total_steps = 0;
  std::optional<EvalSchedule> eval_schedule;
  std::unique_ptr<LrSchedule> schedule;
  double model_seconds = 0;  // reading the model folder (vocabulary and weights)
  double data_seconds = 0;   // reading and tokenizing the training and eval sets
};

// Builds the parts of a run on `world` ranks for `device` (whose precision support is checked).
// Every rank reads the data; rank 0 alone warns about invalid UTF-8 in it (on stderr).
absl::StatusOr<RunParts> BuildRunParts(const TrainerConfig& config, const torch::Device& device,
                                       int rank, int world);

// What must match for --resume to continue a run: the task, the training data (path, size and
// format), the batch, gradient accumulation, ranks, steps, seed, shuffling and whether batches
// hold no duplicate (train.batch_sampler resolved), in one line.
std::string RunFingerprint(const TrainerConfig& config, int world, int64_t total_steps,
                           bool no_duplicates = false);

// --resume: OUTPUT_DIR/checkpoint (trainer/train/train_state.h), refused unless it was made with
// `fingerprint`; its encoder and head weights are loaded into `model`. The caller restores the
// rest (progress, optimizer state).
absl::StatusOr<TrainStateFiles> LoadResumeState(const TrainerConfig& config,
                                                const std::string& fingerprint, TaskModel& model);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_RUN_SETUP_H_
