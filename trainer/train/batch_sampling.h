// A run's batches (trainer/data/batch_plan.h) from its config: train.batch_sampler resolved for
// the task (no_duplicates by default for a loss with in-batch negatives, as sentence-transformers
// does for MultipleNegativesRankingLoss: trainer/data/no_duplicates.h), the plan's options, the
// "batches" set-up line, and the line an epoch prints when duplicates are left in its batches.
// Thread-safety: free functions; PrintUnresolvedDuplicates writes stdout, call it from one thread.
#ifndef TUNEFLEET_TRAINER_TRAIN_BATCH_SAMPLING_H_
#define TUNEFLEET_TRAINER_TRAIN_BATCH_SAMPLING_H_

#include <cstdint>
#include <string>

#include "trainer/config/train_config.h"
#include "trainer/data/batch_plan.h"
#include "trainer/data/task_data.h"
#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

// The plan of `rank` of `world` over `train`: train.batch_size, seed, shuffle and
// group_by_length, `pad_multiple`, the length buckets of `max_len` with CUDA graphs (`graphs`),
// and with train.batch_sampler no_duplicates (as resolved for `task`) the texts' keys
// (TaskData::TextKeys, computed here once).
BatchPlanOptions RunBatchPlanOptions(const TrainConfig& train_config, const Task& task,
                                     const TaskData& train, int64_t max_len, int rank, int world,
                                     int64_t pad_multiple, bool graphs);

// Whether train.batch_sampler, resolved for `task`, is no_duplicates.
bool NoDuplicateBatches(const TrainConfig& train_config, const Task& task);

// The "batches" line: DescribeBatchPlan, naming the loss when no_duplicates is its default
// ("no_duplicates (the default for MultipleNegativesRankingLoss: no text twice in a rank's
// batch); shuffled, not grouped by length").
std::string DescribeRunBatches(const TrainConfig& train_config, const Task& task,
                               const BatchPlanOptions& options, int64_t n);

// "batches  epoch 3: 12 examples share a text with an example of their batch (...)", for an
// epoch whose no_duplicates plan left `unresolved` > 0.
void PrintUnresolvedDuplicates(int64_t epoch, int64_t unresolved);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_BATCH_SAMPLING_H_
