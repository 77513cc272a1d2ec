#include "trainer/train/batch_sampling.h"

#include <cstdio>

#include "trainer/data/no_duplicates.h"

namespace tunefleet {
namespace trainer {

bool NoDuplicateBatches(const TrainConfig& train_config, const Task& task) {
  return ResolveBatchSampler(train_config.batch_sampler, task.in_batch_negatives()) ==
         "no_duplicates";
}

BatchPlanOptions RunBatchPlanOptions(const TrainConfig& t, const Task& task, const TaskData& train,
                                     int64_t max_len, int rank, int world, int64_t pad_multiple,
                                     bool graphs) {
  BatchPlanOptions o;
  o.batch_size = t.batch_size;
  o.rank = rank;
  o.world = world;
  o.seed = static_cast<uint64_t>(t.seed);
  o.shuffle = t.shuffle;
  o.group_by_length = t.group_by_length;
  o.pad_multiple = pad_multiple;
  if (graphs) o.buckets = GraphBuckets(max_len, pad_multiple, t.length_buckets);
  if (ResolveBatchSampler(t.batch_sampler, task.in_batch_negatives()) == "no_duplicates") {
    o.no_duplicates = true;
    o.text_keys = CacheTextKeys(train.size(), [&train](int64_t i) { return train.TextKeys(i); });
  }
  return o;
}

std::string DescribeRunBatches(const TrainConfig& t, const Task& task,
                               const BatchPlanOptions& options, int64_t n) {
  // The loss's name: "MultipleNegativesRankingLoss" of "MultipleNegativesRankingLoss (scale 20,
  // ...), in MatryoshkaLoss ...".
  std::string loss;
  if (options.no_duplicates && t.batch_sampler.empty()) {
    const std::string described = task.Describe();
    loss = described.substr(0, described.find_first_of(" ,"));
  }
  return DescribeBatchPlan(options, n, loss);
}

void PrintUnresolvedDuplicates(int64_t epoch, int64_t unresolved) {
  std::printf(
      "batches  epoch %lld: %lld examples share a text with an example of their batch "
      "(train.batch_sampler: no_duplicates ran out of other examples to fill it)\n",
      static_cast<long long>(epoch), static_cast<long long>(unresolved));
  std::fflush(stdout);
}

}  // namespace trainer
}  // namespace tunefleet
