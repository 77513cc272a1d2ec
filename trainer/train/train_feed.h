// The batches a training run's steps take, in order, on one rank: each training set's batch plan
// (trainer/data/batch_plan.h, through trainer/train/batch_sampling.h) and, with several datasets
// (task.datasets), which dataset each step takes (trainer/data/multi_dataset_sampler.h).
//
// A step takes up to train.grad_accum consecutive batches of one dataset (fewer at the end of
// its epoch). One dataset: the steps walk its batches in order, its position is the batch
// index in the epoch (a checkpoint's batch_in_epoch). Several: the epoch's dataset order is
// drawn from train.seed and the epoch, the same on every rank, and the position is the step's
// index in that order; each dataset's batch index follows from it. Samples seen (across all
// ranks) count each dataset's: world * min(batches done * batch_size, shard).
// Thread-safety: none; the training loop's thread.
#ifndef TUNEFLEET_TRAINER_TRAIN_TRAIN_FEED_H_
#define TUNEFLEET_TRAINER_TRAIN_TRAIN_FEED_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/train_config.h"
#include "trainer/data/batch_plan.h"
#include "trainer/data/multi_dataset_sampler.h"
#include "trainer/data/task_data.h"
#include "trainer/train/run_setup.h"

namespace tunefleet {
namespace trainer {

class TrainFeed {
 public:
  // `sets` and `shape` (RunParts') outlive the feed. `graphs`: CUDA graphs (length buckets);
  // `quiet`: no "batches  epoch N: ..." line for duplicates a no_duplicates plan left.
  TrainFeed(const TrainConfig& train, const std::vector<TrainSet>& sets, const EpochShape& shape,
            int64_t max_len, int rank, int world, int64_t pad_multiple, bool graphs, bool quiet);

  // Positions the feed at `position` of epoch `epoch` (0, 0 for a new run; a checkpoint's
  // epoch and batch_in_epoch) and plans that epoch.
  void Start(int64_t epoch, int64_t position);

  // The next step's dataset (begins the next epoch when this one is done) and its micro-batches.
  struct Step {
    int dataset = 0;
    int64_t micro = 0;
  };
  Step Next();
  // Micro-batch m of the step Next returned, on the CPU; adds its examples to *samples.
  TaskBatch MicroBatch(int64_t m, int64_t* samples) const;
  // After the step ran: moves past its batches.
  void Advance();

  int64_t epoch() const { return epoch_; }
  int64_t position() const { return position_; }
  // Samples seen across all ranks after the steps done.
  int64_t SamplesSeen() const;
  // epoch + the share of this epoch done.
  double EpochProgress() const;
  // Dataset d's batch plan settings (the set-up's "batches" line).
  const BatchPlanOptions& options(int d) const { return options_[static_cast<size_t>(d)]; }

 private:
  void PlanEpoch();
  bool several() const { return sets_.size() > 1; }

  const TrainConfig& train_;
  const std::vector<TrainSet>& sets_;
  const EpochShape& shape_;
  MultiDatasetSampler sampler_;
  int64_t world_;
  int64_t pad_multiple_;
  bool quiet_;
  std::vector<ExampleLengths> lengths_;
  std::vector<BatchPlanOptions> options_;
  std::vector<EpochPlan> plans_;
  std::vector<int> order_;           // several: the dataset of each step of the epoch
  std::vector<int64_t> batch_done_;  // per dataset: batches done this epoch
  int64_t epoch_ = 0;
  int64_t position_ = 0;
  Step step_;
};

// The memory estimate's batch: the rows a step encodes at once (batch_size, or cached_mnrl's
// mini-batch) and the encoder passes over them (texts + hard negatives, or 1 for cached_mnrl),
// of the dataset whose rows x passes is largest.
std::pair<int64_t, int> StepActivations(const std::vector<TrainSet>& sets, int64_t batch_size);

// Once the data is read: why a run that would replay CUDA graphs cannot ("" when it can):
// several datasets, else WhyNoCudaGraphsForTask of the one (trainer/train/graph_policy.h).
std::string WhyNoCudaGraphsForData(const std::vector<TrainSet>& sets);

// The set-up's "datasets" line for several datasets: "nli (mnrl, 1000 examples, 32 steps an
// epoch), margin (margin_mse, ...); proportional: 40 steps an epoch".
std::string DescribeDatasets(const std::vector<TrainSet>& sets, const EpochShape& shape,
                             const TrainConfig& train);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_TRAIN_FEED_H_
