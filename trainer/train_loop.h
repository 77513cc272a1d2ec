// The training run of `trainer train`: a task model trained as the trainer YAML says, with
// evaluation, metrics, checkpoints, and reports to the agent when one launched it.
//
// Steps: an epoch visits the examples in EpochOrder(n, seed, epoch, shuffle), cut into batches of
// train.batch_size (the last one may be smaller); an optimizer step takes train.grad_accum
// batches (fewer at the end of an epoch), the loss of each divided by their number. There are
// ceil(ceil(n / batch) / grad_accum) steps an epoch; train.max_steps > 0 sets the number of
// steps instead of train.epochs (going on into further epochs if needed).
// Each step: forward under autocast (bf16 / fp16), backward (fp16: of the loss times the loss
// scale), gradients unscaled (fp16), their total norm, a skip on inf/NaN (fp16), clipping to
// train.max_grad_norm, AdamW at the schedule's rate, gradients set to none.
// Every log_every_steps steps, at every evaluation and at the end a line goes to
// OUTPUT_DIR/metrics.jsonl and stdout: step, epoch, train/loss (the mean over the steps since the
// previous line), train/grad_norm (before clipping, of the last step), lr (of the last step),
// train/samples_per_s, and eval/... when it evaluated (every eval_every_steps and at the end).
// Under an agent, rank 0 reports each evaluation (each logged line when there is no evaluation
// set) and stops at once on a stop decision; the last metrics go as the final report.
// Thread-safety: one run per process.
#ifndef TUNEFLEET_TRAINER_TRAIN_LOOP_H_
#define TUNEFLEET_TRAINER_TRAIN_LOOP_H_

#include <cstdint>
#include <map>
#include <string>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/agent_client.h"
#include "trainer/train_config.h"

namespace tunefleet {
namespace trainer {

struct TrainOptions {
  torch::Device device{torch::kCPU};
  bool resume = false;            // continue from OUTPUT_DIR/checkpoint
  AgentClient* client = nullptr;  // rank 0 reports here when set
  // Data parallelism: this rank's process group (null or size 1: one process). Every rank
  // trains on its DistributedSampler share with per-rank batch train.batch_size; gradients are
  // averaged (trainer/grad_sync.h); rank 0 alone writes metrics, models and checkpoints.
  comm::ProcessGroup* group = nullptr;
  bool quiet = false;             // no progress lines on stdout
  // For tests of --resume: end the run after this many steps (> 0) as if the process had been
  // killed there: no final save, no final report.
  int64_t interrupt_after_steps = 0;
};

struct TrainSummary {
  int64_t steps = 0;        // optimizer steps done (fp16 steps skipped on inf/NaN included)
  int64_t total_steps = 0;  // planned
  bool stopped = false;     // a stop decision ended the run
  std::map<std::string, double> last_metrics;  // the last line's values
  std::string primary_metric;                  // "eval/spearman" or "eval/accuracy"
  double best = 0.0;                           // NaN when nothing was evaluated
  int64_t best_step = -1;
  double estimate_bytes = 0;
  double peak_bytes = 0;
  double seconds = 0;
  int64_t cuda_graphs = 0;  // graphs captured (train.cuda_graphs); 0: every step ran eagerly
  // Where the time went, in seconds: setup (model, data, device) before the loop, then the
  // loop's phases, which sum to `seconds` up to the loop's own bookkeeping. "steps" is waited
  // for where the loss is read (each log line), so the GPU's time lands there.
  struct Times {
    double setup = 0;
    double setup_model = 0;  // of `setup`: reading the model folder (vocabulary and weights)
    double setup_data = 0;   // of `setup`: reading and tokenizing the training and eval sets
    double first_step = 0;   // the first step: CUDA, cuBLAS and allocator warm-up
    double steps = 0;        // the other steps, captures included
    double captures = 0;     // of `steps`: recording CUDA graphs (eager speed)
    double evaluation = 0;
    double saving = 0;       // the model's and checkpoints' host copies, waits for their writes
    double reports = 0;      // metrics.jsonl, reports to hpo, agreeing on a stop across ranks
  } times;
};

// A CUDA out-of-memory error comes back as ResourceExhausted naming the batch size and the
// estimate; bad input as InvalidArgument / NotFound naming the file.
absl::StatusOr<TrainSummary> RunTraining(const TrainerConfig& config, const TrainOptions& options);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_LOOP_H_
