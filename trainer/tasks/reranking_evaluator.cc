#include "trainer/tasks/reranking_evaluator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "trainer/data/task_data.h"
#include "trainer/tasks/cross_encoder_task.h"
#include "trainer/tasks/reranking_metrics.h"

namespace tunefleet {
namespace trainer {
namespace {

torch::Tensor ScoreBatches(TaskModel& model, const std::vector<Encoding>& pairs, int32_t pad_id,
                           const torch::Device& device, int64_t batch_size, Precision precision) {
  std::vector<torch::Tensor> out;
  for (size_t begin = 0; begin < pairs.size(); begin += batch_size) {
    const size_t end = std::min(pairs.size(), begin + static_cast<size_t>(batch_size));
    const std::vector<Encoding> batch(pairs.begin() + begin, pairs.begin() + end);
    const TextBatch texts = PadTexts(batch, pad_id).To(device);
    AutocastScope autocast(device.type(), precision);
    out.push_back(CrossEncoderScores(CrossEncoderLogits(*model, texts).to(torch::kFloat)).cpu());
  }
  return torch::cat(out);
}

}  // namespace

absl::StatusOr<torch::Tensor> PredictPairs(TaskModel& model, const std::vector<Encoding>& pairs,
                                           int32_t pad_id, const torch::Device& device,
                                           int64_t batch_size, Precision precision) {
  if (pairs.empty()) return torch::empty({0});
  const bool was_training = model->is_training();
  model->eval();
  absl::StatusOr<torch::Tensor> out;
  try {
    torch::NoGradGuard no_grad;
    out = ScoreBatches(model, pairs, pad_id, device, std::max<int64_t>(batch_size, 1), precision);
  } catch (const c10::OutOfMemoryError& e) {
    const std::string what = e.what_without_backtrace();
    out = absl::ResourceExhaustedError(absl::StrCat("scoring ran out of memory at batch size ",
                                                    batch_size, ": ",
                                                    what.substr(0, what.find('\n'))));
  } catch (const c10::Error& e) {
    out = absl::InternalError(absl::StrCat("scoring failed: ", e.what_without_backtrace()));
  }
  if (was_training) model->train();
  return out;
}

absl::StatusOr<std::map<std::string, double>> EvaluateReranking(TaskModel& model,
                                                                const RerankData& data,
                                                                const torch::Device& device,
                                                                int64_t batch_size,
                                                                Precision precision) {
  absl::StatusOr<torch::Tensor> scores =
      PredictPairs(model, data.pairs, data.pad_id, device, batch_size, precision);
  if (!scores.ok()) {
    return absl::Status(scores.status().code(), absl::StrCat("evaluation on ", data.source, ": ",
                                                             scores.status().message()));
  }
  if (scores->dim() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reranking needs a one-output cross-encoder; this head has ", scores->size(1)));
  }
  const torch::Tensor s = scores->to(torch::kDouble).contiguous();
  const double* p = s.data_ptr<double>();
  std::vector<RerankedQuery> queries;
  for (int64_t q = 0; q < data.size(); ++q) {
    const RerankQuery& query = data.queries[q];
    const double* first = p + data.first[q];
    queries.push_back({std::vector<double>(first, first + query.docs.size()), query.relevant});
  }
  return RerankingMetrics(queries);
}

}  // namespace trainer
}  // namespace tunefleet
