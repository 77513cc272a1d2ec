#include "trainer/data/multi_dataset_sampler.h"

#include <algorithm>

#include "trainer/data/datasets.h"

namespace tunefleet {
namespace trainer {

MultiDatasetSampler ParseMultiDatasetSampler(const std::string& name) {
  return name == "round_robin" ? MultiDatasetSampler::kRoundRobin
                               : MultiDatasetSampler::kProportional;
}

EpochShape ShapeEpoch(const std::vector<int64_t>& sizes, int64_t batch_size, int64_t grad_accum,
                      int64_t world, MultiDatasetSampler sampler) {
  EpochShape s;
  int64_t fewest = -1;
  for (int64_t n : sizes) {
    const int64_t shard = (n + world - 1) / world;
    const int64_t batches = (shard + batch_size - 1) / batch_size;
    s.batches.push_back(batches);
    s.steps.push_back((batches + grad_accum - 1) / grad_accum);
    fewest = fewest < 0 ? s.steps.back() : std::min(fewest, s.steps.back());
  }
  const bool round_robin = sampler == MultiDatasetSampler::kRoundRobin && sizes.size() > 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t used = round_robin ? fewest : s.steps[d];
    const int64_t shard = (sizes[d] + world - 1) / world;
    s.used.push_back(used);
    s.steps_per_epoch += used;
    s.samples += world * std::min(used * grad_accum * batch_size, shard);
  }
  return s;
}

std::vector<int> DatasetOrder(const EpochShape& shape, MultiDatasetSampler sampler, uint64_t seed,
                              int64_t epoch) {
  const int datasets = static_cast<int>(shape.used.size());
  std::vector<int> order;
  order.reserve(static_cast<size_t>(shape.steps_per_epoch));
  if (sampler == MultiDatasetSampler::kRoundRobin || datasets == 1) {
    const int64_t rounds = shape.used.empty() ? 0 : shape.used[0];  // all equal
    for (int64_t r = 0; r < rounds; ++r) {
      for (int d = 0; d < datasets; ++d) order.push_back(d);
    }
    return order;
  }
  std::vector<int> multiset;  // d, used[d] times
  for (int d = 0; d < datasets; ++d) multiset.insert(multiset.end(), shape.used[d], d);
  const std::vector<int64_t> perm =
      EpochOrder(static_cast<int64_t>(multiset.size()), seed, epoch, /*shuffle=*/true);
  for (int64_t i : perm) order.push_back(multiset[static_cast<size_t>(i)]);
  return order;
}

}  // namespace trainer
}  // namespace tunefleet
