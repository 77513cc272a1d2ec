#include "trainer/tasks/listwise_losses.h"

#include <algorithm>
#include <memory>
#include <string>

#include "trainer/tasks/cross_encoder_task.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr double kPaddedScore = -1e16;
constexpr double kEps = 1e-10;
constexpr double kMu = 10.0;  // NDCGLoss2PPScheme
constexpr double kSigma = 1.0;

// NDCGLoss2PPScheme: mu * NDCGLoss2Scheme + LambdaRankScheme, [rows, L, L].
torch::Tensor NdcgLoss2PPWeights(const torch::Tensor& gain, const torch::Tensor& discount) {
  const int64_t n = gain.size(1);
  const auto opts = torch::TensorOptions().dtype(torch::kLong).device(gain.device());
  const torch::Tensor pos = torch::arange(1, n + 1, opts);
  const torch::Tensor delta = (pos.unsqueeze(1) - pos.unsqueeze(0)).abs();
  const torch::Tensor d0 = discount.select(0, 0);
  // The diagonal (delta 0) is zeroed below; its index -1 reads the last discount, as Python.
  const torch::Tensor below = torch::where(delta > 0, delta - 1, delta.new_full({}, n - 1));
  torch::Tensor deltas =
      (d0.index({below}).abs().pow(-1.0) - d0.index({delta}).abs().pow(-1.0)).abs();
  deltas.diagonal().zero_();
  const torch::Tensor gain_diff = (gain.unsqueeze(2) - gain.unsqueeze(1)).abs();
  const torch::Tensor ndcg2 = deltas.unsqueeze(0) * gain_diff;
  const torch::Tensor lambda_rank =
      (discount.unsqueeze(2).pow(-1.0) - discount.unsqueeze(1).pow(-1.0)).abs() * gain_diff;
  return kMu * ndcg2 + lambda_rank;
}

class ListwiseTask : public CrossEncoderTask {
 public:
  ListwiseTask(const TaskConfig& config, bool lambda) : CrossEncoderTask(config), lambda_(lambda) {}
  std::string Describe() const override {
    return lambda_ ? "LambdaLoss (NDCGLoss2++ weights, mu 10, sigma 1, binary log)"
                   : "ListNetLoss (cross entropy against the softmax of the relevances)";
  }
  bool builds_pairs() const override { return true; }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    const torch::Tensor logits = CrossEncoderLogits(model, batch.first).to(torch::kFloat);
    TORCH_CHECK(logits.size(1) == 1, "task.loss ", loss(),
                " needs a one-output head, this one has ", logits.size(1));
    const torch::Tensor scores = ListMatrix(logits.view({-1}), batch.group_sizes);
    return lambda_ ? LambdaLossOn(scores, batch.targets) : ListNetLossOn(scores, batch.targets);
  }

 private:
  bool lambda_;
};

TaskPtr BuildLambda(const TaskConfig& config) {
  return std::make_shared<ListwiseTask>(config, true);
}
TaskPtr BuildListNet(const TaskConfig& config) {
  return std::make_shared<ListwiseTask>(config, false);
}

}  // namespace

torch::Tensor ListMatrix(const torch::Tensor& logits, const std::vector<int64_t>& sizes) {
  const int64_t rows = static_cast<int64_t>(sizes.size());
  const int64_t longest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<int64_t> row, column;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < sizes[r]; ++k) {
      row.push_back(r);
      column.push_back(k);
    }
  }
  const auto opts = torch::TensorOptions().dtype(torch::kLong);
  const torch::Tensor r = torch::tensor(row, opts).to(logits.device());
  const torch::Tensor c = torch::tensor(column, opts).to(logits.device());
  // index_put (not in place) keeps the graph to `logits`.
  return torch::full({rows, longest}, kPaddedScore, logits.options()).index_put({r, c}, logits);
}

torch::Tensor ListNetLossOn(const torch::Tensor& scores, const torch::Tensor& relevances) {
  const torch::Tensor target = torch::softmax(relevances, 1);
  return -(target * torch::log_softmax(scores, 1)).sum(1).mean();
}

torch::Tensor LambdaLossOn(const torch::Tensor& scores, const torch::Tensor& relevances) {
  const int64_t n = scores.size(1);
  auto [scores_sorted, order] = scores.sort(/*dim=*/-1, /*descending=*/true);
  torch::Tensor relevances_sorted = std::get<0>(relevances.sort(-1, true));
  torch::Tensor true_by_preds = torch::gather(relevances, 1, order);
  const torch::Tensor true_diffs = true_by_preds.unsqueeze(2) - true_by_preds.unsqueeze(1);
  const torch::Tensor pairs = torch::isfinite(true_diffs) & (true_diffs > 0);
  true_by_preds = true_by_preds.clamp_min(0.0);
  relevances_sorted = relevances_sorted.clamp_min(0.0);
  const torch::Tensor pos = torch::arange(1, n + 1, scores.options());
  const torch::Tensor discount = torch::log2(1.0 + pos).unsqueeze(0);
  const torch::Tensor max_dcg =
      ((torch::pow(2.0, relevances_sorted) - 1.0) / discount).sum(-1).clamp_min(kEps);
  const torch::Tensor gain = (torch::pow(2.0, true_by_preds) - 1.0) / max_dcg.unsqueeze(1);
  const torch::Tensor weights = NdcgLoss2PPWeights(gain, discount);
  torch::Tensor diffs = (scores_sorted.unsqueeze(2) - scores_sorted.unsqueeze(1)).clamp(-1e8, 1e8);
  diffs = diffs.masked_fill(torch::isnan(diffs), 0.0);
  const torch::Tensor probas =
      torch::pow(torch::sigmoid(kSigma * diffs).clamp_min(kEps), weights).clamp_min(kEps);
  return -torch::log2(probas).masked_select(pairs).mean();
}

const LossKind& LambdaLossKind() {
  static const LossKind* const kKind = new LossKind{
      "lambda", {"cross_encoder_list"}, {}, /*embeddings=*/false, nullptr, &BuildLambda};
  return *kKind;
}

const LossKind& ListNetLossKind() {
  static const LossKind* const kKind = new LossKind{
      "listnet", {"cross_encoder_list"}, {}, /*embeddings=*/false, nullptr, &BuildListNet};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
