#include "trainer/tasks/evaluator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <torch/nn/functional/distance.h>
#include <torch/nn/functional/loss.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/tasks/correlation.h"
#include "trainer/tasks/eval_order.h"
#include "trainer/tasks/reranking_evaluator.h"
#include "trainer/tasks/retrieval_evaluator.h"
#include "trainer/tasks/triplet_evaluator.h"

namespace tunefleet {
namespace trainer {

namespace {

// The similarity widths: the whole embedding (0), then each of `dims` (none for accuracy).
absl::StatusOr<std::vector<int64_t>> SimilarityWidths(TaskModel& model, const TaskData& data,
                                                      bool accuracy,
                                                      const std::vector<int64_t>& dims) {
  const int64_t width = model->bert()->config().hidden_size;
  std::vector<int64_t> widths = {0};
  if (accuracy) return widths;
  for (int64_t d : dims) {
    if (d < 1 || d > width) {
      return absl::InvalidArgumentError(
          absl::StrCat("evaluation on ", data.source(), ": matryoshka dim ", d,
                       " is outside [1, the embedding width ", width, "]"));
    }
    widths.push_back(d);
  }
  return widths;
}

// What the evaluation adds up over the examples, indexed by example (zero where another rank
// evaluated it).
struct EvalSums {
  std::vector<std::vector<double>> predictions;  // [w]: the cosine similarities at widths[w]
  std::vector<double> truth;                     // the gold scores
  double loss_sum = 0.0;
  int64_t correct = 0;
};

// Runs the model over this rank's examples (`order`), batch by batch. Results stay on the device
// until the end: one copy back, no wait after each batch.
EvalSums RunBatches(TaskModel& model, const TaskData& data, const std::vector<int64_t>& order,
                    const std::vector<int64_t>& widths, bool accuracy, const torch::Device& device,
                    int64_t batch_size, Precision precision) {
  const int64_t n = data.size(), local = static_cast<int64_t>(order.size());
  EvalSums sums;
  sums.predictions.assign(widths.size(), std::vector<double>(n));
  sums.truth.assign(n, 0.0);
  std::vector<std::vector<torch::Tensor>> cos_parts(widths.size());
  std::vector<torch::Tensor> loss_parts, correct_parts;
  for (int64_t begin = 0; begin < local; begin += batch_size) {
    std::vector<int64_t> indices(order.begin() + begin,
                                 order.begin() + std::min(local, begin + batch_size));
    const TaskBatch host = data.Batch(indices, device.is_cuda() ? 8 : 1);
    const TaskBatch batch = host.To(device);
    AutocastScope autocast(device.type(), precision);
    if (accuracy) {
      const torch::Tensor logits = model->Logits(batch).to(torch::kFloat);
      loss_parts.push_back(torch::nn::functional::cross_entropy(
          logits, batch.labels,
          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)));
      correct_parts.push_back(logits.argmax(1).eq(batch.labels).sum());
    } else {
      // Both sides in one encoder pass (trainer/tasks/task_model.h).
      const auto [u, v] = model->EmbedPair(batch.first, batch.second);
      const torch::Tensor uf = u.to(torch::kFloat), vf = v.to(torch::kFloat);
      for (size_t w = 0; w < widths.size(); ++w) {
        const int64_t d = widths[w] > 0 ? widths[w] : uf.size(1);
        cos_parts[w].push_back(torch::nn::functional::cosine_similarity(
            uf.narrow(1, 0, d), vf.narrow(1, 0, d),
            torch::nn::functional::CosineSimilarityFuncOptions().dim(1)));
      }
      const torch::Tensor gold = host.scores.to(torch::kDouble);
      const auto g = gold.accessor<double, 1>();
      for (size_t i = 0; i < indices.size(); ++i) {
        sums.truth[indices[i]] = g[static_cast<int64_t>(i)];
      }
    }
  }
  for (size_t w = 0; w < widths.size(); ++w) {
    if (cos_parts[w].empty()) continue;
    const torch::Tensor cos = torch::cat(cos_parts[w]).to(torch::kCPU, torch::kDouble);
    const auto c = cos.accessor<double, 1>();
    for (int64_t i = 0; i < local; ++i) sums.predictions[w][order[i]] = c[i];
  }
  if (!loss_parts.empty()) {
    sums.loss_sum = torch::stack(loss_parts).sum().item<double>();
    sums.correct = torch::stack(correct_parts).sum().item<int64_t>();
  }
  return sums;
}

// Each example was evaluated by exactly one rank: sums over the group give every rank the whole
// set.
absl::Status ReduceSums(comm::ProcessGroup& group, const torch::Device& device, bool accuracy,
                        EvalSums& sums) {
  const torch::Device where =
      group.backend() == comm::ProcessGroup::Backend::kNccl ? device : torch::Device(torch::kCPU);
  auto reduce = [&](std::vector<double>& v) -> absl::Status {
    torch::Tensor t = torch::tensor(v, torch::kDouble).to(where);
    RETURN_IF_ERROR(group.AllReduceSum(t));
    t = t.to(torch::kCPU);
    std::copy(t.data_ptr<double>(), t.data_ptr<double>() + t.numel(), v.begin());
    return absl::OkStatus();
  };
  std::vector<double> counts = {sums.loss_sum, static_cast<double>(sums.correct)};
  absl::Status s = accuracy ? reduce(counts) : reduce(sums.truth);
  for (size_t w = 0; w < sums.predictions.size() && s.ok() && !accuracy; ++w) {
    s = reduce(sums.predictions[w]);
  }
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("evaluation: ", s.message()));
  sums.loss_sum = counts[0];
  sums.correct = static_cast<int64_t>(std::llround(counts[1]));
  return absl::OkStatus();
}

// eval/accuracy and eval/loss, or eval/spearman and eval/pearson at each width (@dim after the
// first), over the n examples.
std::map<std::string, double> Metrics(const EvalSums& sums, const std::vector<int64_t>& widths,
                                      bool accuracy, int64_t n) {
  std::map<std::string, double> out;
  if (accuracy) {
    out["eval/accuracy"] = static_cast<double>(sums.correct) / static_cast<double>(n);
    out["eval/loss"] = sums.loss_sum / static_cast<double>(n);
    return out;
  }
  for (size_t w = 0; w < widths.size(); ++w) {
    const std::string suffix = widths[w] > 0 ? absl::StrCat("@", widths[w]) : "";
    out["eval/spearman" + suffix] = Spearman(sums.predictions[w], sums.truth);
    out["eval/pearson" + suffix] = Pearson(sums.predictions[w], sums.truth);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, double>> Evaluate(TaskModel& model, const EvalSet& data,
                                                       const torch::Device& device,
                                                       int64_t batch_size, Precision precision,
                                                       comm::ProcessGroup* group,
                                                       const std::vector<int64_t>& dims) {
  if (data.retrieval != nullptr) {
    return EvaluateRetrieval(model, *data.retrieval, device, batch_size, precision, group, dims);
  }
  if (data.reranking != nullptr) {
    return EvaluateReranking(model, *data.reranking, device, batch_size, precision);
  }
  if (data.triplets != nullptr) {
    return EvaluateTriplets(model, *data.triplets, device, batch_size, precision, group, dims);
  }
  if (data.pairs == nullptr) return absl::InvalidArgumentError("evaluation: no evaluation data");
  return Evaluate(model, *data.pairs, device, batch_size, precision, group, dims);
}

absl::StatusOr<std::map<std::string, double>> Evaluate(TaskModel& model, const TaskData& data,
                                                       const torch::Device& device,
                                                       int64_t batch_size, Precision precision,
                                                       comm::ProcessGroup* group,
                                                       const std::vector<int64_t>& dims) {
  const bool accuracy = model->task().evaluation() == Evaluation::kAccuracy;
  ASSIGN_OR_RETURN(const std::vector<int64_t> widths,
                   SimilarityWidths(model, data, accuracy, dims));
  const bool was_training = model->is_training();
  model->eval();
  std::map<std::string, double> out;
  try {
    torch::NoGradGuard no_grad;
    const std::vector<int64_t> order = RankOrder(data, group);
    EvalSums sums = RunBatches(model, data, order, widths, accuracy, device, batch_size, precision);
    if (group != nullptr && group->size() > 1) {
      if (absl::Status s = ReduceSums(*group, device, accuracy, sums); !s.ok()) {
        if (was_training) model->train();
        return s;
      }
    }
    out = Metrics(sums, widths, accuracy, data.size());
  } catch (const c10::OutOfMemoryError& e) {
    if (was_training) model->train();
    const std::string what = e.what_without_backtrace();
    return absl::ResourceExhaustedError(
        absl::StrCat("evaluation on ", data.source(), " ran out of memory at batch size ",
                     batch_size, ": ", what.substr(0, what.find('\n'))));
  } catch (const c10::Error& e) {
    if (was_training) model->train();
    return absl::InternalError(
        absl::StrCat("evaluation on ", data.source(), " failed: ", e.what_without_backtrace()));
  }
  if (was_training) model->train();
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
