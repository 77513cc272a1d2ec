// The training run of `trainer train`: a task model trained as the trainer YAML says, with
// evaluation, metrics, checkpoints, and reports to the agent when one launched it.
//
// Steps: an epoch visits this rank's examples in the order of trainer/data/batch_plan.h (its share
// of EpochOrder(n, seed, epoch, shuffle), grouped by length unless train.group_by_length is false),
// cut into batches of train.batch_size (the last one may be smaller), each padded to the length
// every rank pads that step's batch to; an optimizer step takes train.grad_accum
// batches (fewer at the end of an epoch), the loss of each divided by their number. There are
// ceil(ceil(n / batch) / grad_accum) steps an epoch; train.max_steps > 0 sets the number of
// steps instead of train.epochs (going on into further epochs if needed).
// Each step: forward under autocast (bf16 / fp16), backward (fp16: of the loss times the loss
// scale), gradients unscaled (fp16), their total norm, a skip on inf/NaN (fp16), clipping to
// train.max_grad_norm, AdamW at the schedule's rate, gradients set to none.
//
// Evaluation points and their keys (trainer/train/eval_schedule.h). Keys place reports on sweeps'
// resource axis, the samples seen across all ranks (Report.samples, by which hpo keys its
// journal), so that trials of any batch size are compared at equal data. With n training
// examples on `world` ranks, shard = ceil(n / world) examples per rank and epoch (the
// DistributedSampler pads by repetition) and N = shard * world samples an epoch; after a step,
//   samples_seen = epoch * N + world * min(batch_in_epoch * batch_size, shard)
// where epoch (0-based) and batch_in_epoch (batches of train.batch_size done in that epoch,
// every grad_accum micro-batch counted) are the position after the step: after an epoch's
// last step it is (epoch + 1) * N. It is a function of the position alone, so every rank
// decides the same without a collective, and a resumed run (--resume) recomputes it from the
// checkpoint's position and evaluates and keys exactly as the uninterrupted run.
// The cadence is at most one of (all 0: only the last step evaluates)
//   train.eval_every_steps K:   step s evaluates when s % K == 0, keyed by its samples_seen;
//   train.eval_every_samples S: targets S, 2S, 3S, ...;
//   train.eval_every_epochs f:  targets llround(j * f * N) for j = 1, 2, ..., in double
//                               precision as (j * f) * N (f = 1/8, N = 640: 80, 160, ..., 640,
//                               720, ...).
// With targets, a step evaluates when its samples_seen reaches the next target (a target lies
// in (samples_seen before the step, samples_seen after it]); its key is the largest target
// <= samples_seen (one evaluation however many targets the step crossed), and the next target
// is the first one > samples_seen. The last step (of total_steps) always evaluates, keyed by
// its samples_seen (the trial's total samples). Example, 640 pairs, one rank, one epoch,
// f = 1/8: batch 16 (40 steps) evaluates at steps 5, 10, ..., 35 with keys 80, 160, ..., 560
// and last at step 40 with key 640; batch 128 (5 steps) at steps 1, 2, 3, 4 with keys 80,
// 240, 320, 480 and last at step 5 with key 640.
//
// Every log_every_steps steps, at every evaluation point and at the end a line goes to
// OUTPUT_DIR/metrics.jsonl and stdout: step, samples (samples_seen, an integer), epoch,
// train/loss (the mean over the steps since the previous line), train/grad_norm (before
// clipping, of the last step), lr (of the last step), train/samples_per_s, and eval/... when it
// evaluated (at the evaluation points and at the end; without task.eval data nothing is
// evaluated but the points are kept).
// Under an agent, rank 0 reports each evaluation point but the last as Report(step, key,
// values) (the line's training metrics when there is no evaluation data) and stops at once on a
// stop decision; the last step's line goes as ReportFinal(step, samples_seen, values).
// Thread-safety: one run per process.
#ifndef TUNEFLEET_TRAINER_TRAIN_TRAIN_LOOP_H_
#define TUNEFLEET_TRAINER_TRAIN_TRAIN_LOOP_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/config/train_config.h"
#include "trainer/distributed/agent_client.h"

namespace tunefleet {
namespace trainer {

struct TrainOptions {
  torch::Device device{torch::kCPU};
  bool resume = false;            // continue from OUTPUT_DIR/checkpoint
  AgentClient* client = nullptr;  // rank 0 reports here when set
  // Data parallelism: this rank's process group (null or size 1: one process). Every rank
  // trains on its DistributedSampler share with per-rank batch train.batch_size; gradients are
  // averaged (trainer/distributed/grad_sync.h); rank 0 alone writes metrics, models and
  // checkpoints.
  comm::ProcessGroup* group = nullptr;
  bool quiet = false;  // no progress lines on stdout
  // For tests of --resume: end the run after this many steps (> 0) as if the process had been
  // killed there: no final save, no final report.
  int64_t interrupt_after_steps = 0;
};

struct TrainSummary {
  int64_t steps = 0;        // optimizer steps done (fp16 steps skipped on inf/NaN included)
  int64_t total_steps = 0;  // planned
  int64_t samples = 0;      // samples_seen after the last step done (train_loop.h's rule)
  // The evaluation points of this process's run in order, as rank 0 reports them to the agent
  // (recorded on every rank, with or without an agent): the step, the key (Report.samples)
  // and whether it went as the final report. A resumed run lists the points after the resume.
  struct ReportPoint {
    int64_t step = 0;
    int64_t samples = 0;
    bool final = false;
    bool operator==(const ReportPoint& o) const {
      return step == o.step && samples == o.samples && final == o.final;
    }
  };
  std::vector<ReportPoint> reports;
  bool stopped = false;                        // a stop decision ended the run
  std::map<std::string, double> last_metrics;  // the last line's values
  std::string primary_metric;                  // "eval/spearman" or "eval/accuracy"
  double best = 0.0;                           // NaN when nothing was evaluated
  int64_t best_step = -1;
  double estimate_bytes = 0;
  double peak_bytes = 0;
  // AdamW's state as this rank holds it at the end (its moments and steps: 1/N of it under
  // train.strategy zero1 on N ranks), and what one unsharded optimizer holds for the model.
  int64_t optimizer_state_bytes = 0;
  int64_t optimizer_state_unsharded_bytes = 0;
  int optimizer_shards = 1;
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
    double saving = 0;   // the model's and checkpoints' host copies, waits for their writes
    double reports = 0;  // metrics.jsonl, reports to hpo, agreeing on a stop across ranks
  } times;
};

// A CUDA out-of-memory error comes back as ResourceExhausted naming the batch size and the
// estimate; bad input as InvalidArgument / NotFound naming the file.
absl::StatusOr<TrainSummary> RunTraining(const TrainerConfig& config, const TrainOptions& options);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_TRAIN_LOOP_H_
