#include "trainer/tasks/triplet_evaluator.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include <torch/nn/functional/normalization.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/tasks/eval_order.h"

namespace tunefleet {
namespace trainer {
namespace {

// The widths evaluated: the whole embedding (0), then each of `dims`.
absl::StatusOr<std::vector<int64_t>> Widths(int64_t width, const std::vector<int64_t>& dims,
                                            const std::string& source) {
  std::vector<int64_t> widths = {0};
  for (int64_t d : dims) {
    if (d < 1 || d > width) {
      return absl::InvalidArgumentError(
          absl::StrCat("triplet evaluation on ", source, ": matryoshka dim ", d,
                       " is outside [1, the embedding width ", width, "]"));
    }
    widths.push_back(d);
  }
  return widths;
}

// This rank's correct rows at each width: a float64 [widths] tensor on `device`.
torch::Tensor CountCorrect(TaskModel& model, const TaskData& data,
                           const std::vector<int64_t>& order, const std::vector<int64_t>& widths,
                           const torch::Device& device, int64_t batch_size, Precision precision) {
  const int64_t local = static_cast<int64_t>(order.size());
  const int64_t num_widths = static_cast<int64_t>(widths.size());
  torch::Tensor correct =
      torch::zeros({num_widths}, torch::TensorOptions(device).dtype(torch::kDouble));
  for (int64_t begin = 0; begin < local; begin += batch_size) {
    const std::vector<int64_t> indices(order.begin() + begin,
                                       order.begin() + std::min(local, begin + batch_size));
    const TaskBatch batch = data.Batch(indices, device.is_cuda() ? 8 : 1).To(device);
    std::vector<torch::Tensor> e;
    {
      AutocastScope autocast(device.type(), precision);
      e = model->EmbedAll({batch.first, batch.second, batch.negatives[0]});
    }
    for (int64_t w = 0; w < num_widths; ++w) {
      const int64_t d = widths[w] > 0 ? widths[w] : e[0].size(1);
      const torch::Tensor hits =
          TripletCorrect(e[0].narrow(1, 0, d), e[1].narrow(1, 0, d), e[2].narrow(1, 0, d));
      correct[w] += hits.sum().to(torch::kDouble);
    }
  }
  return correct;
}

// eval/accuracy at each width (@dim after the first) from the counts over `n` rows.
std::map<std::string, double> Metrics(const torch::Tensor& correct,
                                      const std::vector<int64_t>& widths, int64_t n) {
  const torch::Tensor counts = correct.to(torch::kCPU);
  std::map<std::string, double> out;
  for (size_t w = 0; w < widths.size(); ++w) {
    const std::string suffix = widths[w] > 0 ? absl::StrCat("@", widths[w]) : "";
    out["eval/accuracy" + suffix] =
        counts[static_cast<int64_t>(w)].item<double>() / static_cast<double>(n);
  }
  return out;
}

// The metrics of the model on `data`, LibTorch errors thrown.
absl::StatusOr<std::map<std::string, double>> Run(TaskModel& model, const TaskData& data,
                                                  const std::vector<int64_t>& widths,
                                                  const torch::Device& device, int64_t batch_size,
                                                  Precision precision, comm::ProcessGroup* group) {
  torch::NoGradGuard no_grad;
  const std::vector<int64_t> order = RankOrder(data, group);
  torch::Tensor correct = CountCorrect(model, data, order, widths, device, batch_size, precision);
  if (group != nullptr && group->size() > 1) {
    // Each row was evaluated by exactly one rank: the sums are the whole set's.
    const bool on_device = group->backend() == comm::ProcessGroup::Backend::kNccl;
    if (!on_device) correct = correct.to(torch::kCPU);
    if (absl::Status s = group->AllReduceSum(correct); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("triplet evaluation: ", s.message()));
    }
  }
  return Metrics(correct, widths, data.size());
}

}  // namespace

absl::StatusOr<TaskData> MakeTripletData(std::vector<Example> rows, const Tokenizer& tokenizer,
                                         int64_t max_len, const std::string& source) {
  if (rows.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": no examples"));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].texts() != 3 || rows[i].negatives.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": row ", i + 1, " has ", rows[i].texts(),
                       " text columns; triplet evaluation takes 3 (anchor, positive, negative)"));
    }
    rows[i].label = kNoLabel;  // every row counts (TaskData would drop one labelled 0)
  }
  const DataKind kind{"triplet evaluation", RowTarget::kPositivePairs, /*joint_pair=*/false};
  return TaskData::Make(kind, rows, "jsonl", tokenizer, max_len, source);
}

torch::Tensor TripletCorrect(const torch::Tensor& anchors, const torch::Tensor& positives,
                             const torch::Tensor& negatives, double margin) {
  namespace F = torch::nn::functional;
  const auto unit = [](const torch::Tensor& t) {
    return F::normalize(t.to(torch::kFloat), F::NormalizeFuncOptions().p(2).dim(1));
  };
  const torch::Tensor a = unit(anchors);
  const torch::Tensor positive = (a * unit(positives)).sum(-1);
  const torch::Tensor negative = (a * unit(negatives)).sum(-1);
  return positive.gt(negative + margin);
}

absl::StatusOr<std::map<std::string, double>> EvaluateTriplets(
    TaskModel& model, const TaskData& data, const torch::Device& device, int64_t batch_size,
    Precision precision, comm::ProcessGroup* group, const std::vector<int64_t>& dims) {
  if (data.num_negatives() != 1 || data.kind().joint_pair) {
    return absl::InvalidArgumentError(
        absl::StrCat("triplet evaluation on ", data.source(),
                     ": needs (anchor, positive, negative) rows, one negative each"));
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> widths,
                   Widths(model->bert()->config().hidden_size, dims, data.source()));
  const bool was_training = model->is_training();
  model->eval();
  absl::StatusOr<std::map<std::string, double>> out;
  try {
    out = Run(model, data, widths, device, std::max<int64_t>(batch_size, 1), precision, group);
  } catch (const c10::OutOfMemoryError& e) {
    const std::string what = e.what_without_backtrace();
    out = absl::ResourceExhaustedError(absl::StrCat("triplet evaluation on ", data.source(),
                                                    " ran out of memory at batch size ", batch_size,
                                                    ": ", what.substr(0, what.find('\n'))));
  } catch (const c10::Error& e) {
    out = absl::InternalError(absl::StrCat("triplet evaluation on ", data.source(),
                                           " failed: ", e.what_without_backtrace()));
  }
  if (was_training) model->train();
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
