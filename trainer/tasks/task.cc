#include "trainer/tasks/task.h"

#include <cstdlib>

#include "absl/strings/str_format.h"
#include "c10/util/Exception.h"

namespace tunefleet {
namespace trainer {

const char* PrimaryMetric(Evaluation evaluation) {
  switch (evaluation) {
    case Evaluation::kAccuracy:
      return "eval/accuracy";
    case Evaluation::kRetrieval:
      return "eval/ndcg@10";  // the evaluator's primary metric in sentence-transformers
    case Evaluation::kSimilarity:
      break;
  }
  return "eval/spearman";
}

torch::Tensor Task::Logits(TaskModelImpl& model, const TaskBatch& batch) const {
  TORCH_CHECK(false, "task ", type(), " has no classifier");
  return torch::Tensor();
}

std::string ShortestNumber(double v) {
  for (int precision = 1; precision < 17; ++precision) {
    std::string text = absl::StrFormat("%.*g", precision, v);
    if (std::strtod(text.c_str(), nullptr) == v) return text;
  }
  return absl::StrFormat("%.17g", v);
}

}  // namespace trainer
}  // namespace tunefleet
