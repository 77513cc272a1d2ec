// Whether `trainer train` replays its steps as CUDA graphs (train.cuda_graphs,
// trainer/train/step_graphs.h), decided once before the run from the configuration and the device.
// A pure function: no LibTorch, no device access (the caller asks StepGraphs::Available()).
//
// Graphs are used unless, in this order of precedence:
//   not on a GPU; train.cuda_graphs is "false"; this LibTorch cannot capture; train.precision
//   is fp16 (its loss scaling decides on the host whether a step happens); gradient
//   checkpointing is on (it re-runs layers under saved random states, which a graph cannot
//   replay). Under data parallelism the graphs hold the gradient all-reduce too, started from
//   the gradient hooks during backward (trainer/distributed/grad_sync.h), so it overlaps backward
//   there as in eager steps; "auto" and "true" are the same.
// Once its task is built, a run also steps eagerly for a loss that runs its own backward
// passes (cached_mnrl) or rows with hard negatives. A run that decided for graphs may still fall
// back to eager steps after its first step, when a parameter got no gradient
// (trainer/train/train_loop.cc).
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_TRAIN_GRAPH_POLICY_H_
#define TUNEFLEET_TRAINER_TRAIN_GRAPH_POLICY_H_

#include <cstdint>
#include <string>

#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {

// "" when the steps are replayed as CUDA graphs; otherwise why not, one phrase that the
// trainer prints after "steps    eager: ".
std::string WhyNoCudaGraphs(const TrainConfig& train, bool on_gpu, bool capture_available);

// Once the task and data are known: why a run that would replay graphs cannot ("" when it can):
// a loss that runs its own backward passes (`multi_pass_loss`, e.g. cached_mnrl), or rows with
// hard negatives (the graphs take the first and second texts only).
// `pair_loss`: a loss whose batches build their own pairs (Task::builds_pairs), or "".
std::string WhyNoCudaGraphsForTask(const std::string& multi_pass_loss, int64_t negatives,
                                   const std::string& pair_loss = "");

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_GRAPH_POLICY_H_
