// Several training sets in one run (task.datasets): how many batches and steps each has in an
// epoch, and which dataset each step of an epoch takes its batches from, as sentence-transformers'
// multi-dataset batch samplers (sentence_transformers/sampler.py) with train.multi_dataset_sampler:
//
//   round_robin   the datasets in turn, 0, 1, ..., D-1, 0, 1, ..., until the smallest runs out:
//                 min(steps) rounds an epoch (RoundRobinBatchSampler);
//   proportional  every step of every dataset once an epoch, in a random order: dataset d is
//                 drawn with probability proportional to its steps left
//                 (ProportionalBatchSampler: a permutation of the multiset {d x steps[d]}).
//                 The permutation is EpochOrder(total steps, seed, epoch) (trainer/data/
//                 datasets.h), so the same on every rank and platform.
//
// Each step's micro-batches (train.grad_accum) come from one dataset: its next grad_accum
// batches, so a dataset's steps are ceil(batches / grad_accum) (with grad_accum 1, as
// sentence-transformers: each batch from one dataset). A dataset's batches are those of its own
// batch plan (trainer/data/batch_plan.h): per rank ceil(ceil(n / world) / batch_size).
// One dataset is the plain run: its steps in order, whichever sampler.
// Thread-safety: pure functions.
#ifndef TUNEFLEET_TRAINER_DATA_MULTI_DATASET_SAMPLER_H_
#define TUNEFLEET_TRAINER_DATA_MULTI_DATASET_SAMPLER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

enum class MultiDatasetSampler { kProportional, kRoundRobin };

// "round_robin" -> kRoundRobin; anything else (the config checks it) kProportional.
MultiDatasetSampler ParseMultiDatasetSampler(const std::string& name);

// The shape of an epoch over datasets of `sizes` examples on `world` ranks.
struct EpochShape {
  std::vector<int64_t> batches;  // per dataset: its batches an epoch on each rank
  std::vector<int64_t> steps;    // per dataset: ceil(batches / grad_accum)
  std::vector<int64_t> used;     // per dataset: the steps an epoch takes of it (round_robin: min)
  int64_t steps_per_epoch = 0;   // the sum of `used`
  // Samples an epoch trains on across all ranks: per dataset world * min(used * grad_accum *
  // batch_size, shard) (the sum of the padded sizes, ceil(n / world) * world, but for
  // round_robin's unused steps).
  int64_t samples = 0;
};
EpochShape ShapeEpoch(const std::vector<int64_t>& sizes, int64_t batch_size, int64_t grad_accum,
                      int64_t world, MultiDatasetSampler sampler);

// The dataset of each step of epoch `epoch` (shape.steps_per_epoch of them).
std::vector<int> DatasetOrder(const EpochShape& shape, MultiDatasetSampler sampler, uint64_t seed,
                              int64_t epoch);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_MULTI_DATASET_SAMPLER_H_
