#include "trainer/train/train_feed.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

#include "trainer/train/batch_sampling.h"
#include "trainer/train/graph_policy.h"

namespace tunefleet {
namespace trainer {

TrainFeed::TrainFeed(const TrainConfig& train, const std::vector<TrainSet>& sets,
                     const EpochShape& shape, int64_t max_len, int rank, int world,
                     int64_t pad_multiple, bool graphs, bool quiet)
    : train_(train),
      sets_(sets),
      shape_(shape),
      sampler_(ParseMultiDatasetSampler(train.multi_dataset_sampler)),
      world_(world),
      pad_multiple_(pad_multiple),
      quiet_(quiet) {
  for (const TrainSet& set : sets_) {
    lengths_.push_back(set.data->Lengths());
    options_.push_back(RunBatchPlanOptions(train, *set.task, *set.data, max_len, rank, world,
                                           pad_multiple, graphs));
  }
}

void TrainFeed::PlanEpoch() {
  plans_.clear();
  for (size_t d = 0; d < sets_.size(); ++d) {
    plans_.push_back(trainer::PlanEpoch(lengths_[d], epoch_, options_[d]));
    if (!quiet_ && plans_.back().unresolved > 0) {
      PrintUnresolvedDuplicates(epoch_, plans_.back().unresolved);
    }
  }
  if (several()) {
    order_ = DatasetOrder(shape_, sampler_, static_cast<uint64_t>(train_.seed), epoch_);
  }
  batch_done_.assign(sets_.size(), 0);
}

void TrainFeed::Start(int64_t epoch, int64_t position) {
  epoch_ = epoch;
  position_ = position;
  PlanEpoch();
  if (!several()) {
    batch_done_[0] = position;
    return;
  }
  for (int64_t i = 0; i < position && i < static_cast<int64_t>(order_.size()); ++i) {
    const size_t d = static_cast<size_t>(order_[static_cast<size_t>(i)]);
    batch_done_[d] = std::min(batch_done_[d] + train_.grad_accum, shape_.batches[d]);
  }
}

TrainFeed::Step TrainFeed::Next() {
  const int64_t end = several() ? static_cast<int64_t>(order_.size()) : shape_.batches[0];
  if (position_ >= end) {
    ++epoch_;
    position_ = 0;
    PlanEpoch();
  }
  step_.dataset = several() ? order_[static_cast<size_t>(position_)] : 0;
  const size_t d = static_cast<size_t>(step_.dataset);
  step_.micro = std::min(train_.grad_accum, shape_.batches[d] - batch_done_[d]);
  return step_;
}

TaskBatch TrainFeed::MicroBatch(int64_t m, int64_t* samples) const {
  const size_t d = static_cast<size_t>(step_.dataset);
  const std::vector<int64_t>& order = plans_[d].order;
  const int64_t n = static_cast<int64_t>(order.size()), b = train_.batch_size;
  const int64_t batch = batch_done_[d] + m, begin = batch * b;
  std::vector<int64_t> indices(order.begin() + begin, order.begin() + std::min(n, begin + b));
  *samples += static_cast<int64_t>(indices.size());
  return sets_[d].data->Batch(indices, pad_multiple_, plans_[d].pads[static_cast<size_t>(batch)]);
}

void TrainFeed::Advance() {
  batch_done_[static_cast<size_t>(step_.dataset)] += step_.micro;
  position_ = several() ? position_ + 1 : batch_done_[0];
}

int64_t TrainFeed::SamplesSeen() const {
  int64_t seen = epoch_ * shape_.samples;
  for (size_t d = 0; d < sets_.size(); ++d) {
    const int64_t shard = (sets_[d].data->size() + world_ - 1) / world_;
    seen += world_ * std::min(batch_done_[d] * train_.batch_size, shard);
  }
  return seen;
}

double TrainFeed::EpochProgress() const {
  const int64_t end = several() ? static_cast<int64_t>(order_.size()) : shape_.batches[0];
  return static_cast<double>(epoch_) +
         static_cast<double>(position_) / static_cast<double>(std::max<int64_t>(end, 1));
}

std::pair<int64_t, int> StepActivations(const std::vector<TrainSet>& sets, int64_t batch_size) {
  int64_t rows = 0;
  int passes = 0;
  for (const TrainSet& set : sets) {
    const bool cached = set.task->activation_texts() > 0;
    const int64_t r = cached ? std::min(batch_size, set.task->activation_texts()) : batch_size;
    const int p =
        cached ? 1 : static_cast<int>(set.task->train_data().texts() + set.data->num_negatives());
    if (static_cast<int64_t>(p) * r > static_cast<int64_t>(passes) * rows) {
      rows = r;
      passes = p;
    }
  }
  return {rows, passes};
}

std::string WhyNoCudaGraphsForData(const std::vector<TrainSet>& sets) {
  if (sets.size() > 1) return "several datasets (task.datasets)";
  const Task& task = *sets.front().task;
  return WhyNoCudaGraphsForTask(task.multi_pass_backward() ? task.loss() : "",
                                sets.front().data->num_negatives(),
                                task.builds_pairs() ? task.loss() : "");
}

std::string DescribeDatasets(const std::vector<TrainSet>& sets, const EpochShape& shape,
                             const TrainConfig& train) {
  std::string text;
  for (size_t d = 0; d < sets.size(); ++d) {
    absl::StrAppend(&text, d == 0 ? "" : ", ", sets[d].name, " (", sets[d].task->loss(), ", ",
                    sets[d].data->size(), " examples, ", shape.used[d], " of ", shape.steps[d],
                    " steps an epoch)");
  }
  absl::StrAppend(&text, "; ", train.multi_dataset_sampler, ": ", shape.steps_per_epoch,
                  " steps an epoch, each from one dataset");
  return text;
}

}  // namespace trainer
}  // namespace tunefleet
