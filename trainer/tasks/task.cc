#include "trainer/tasks/task.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_format.h"
#include "c10/util/Exception.h"

namespace tunefleet {
namespace trainer {

Task::Task(const TaskConfig& config) : type_(config.type), loss_(config.loss) {
  const TaskType* type = FindTaskType(config.type);
  TORCH_CHECK(type != nullptr, "unknown task type ", config.type);
  train_data_ = {type->name, type->target, type->joint_pair};
  eval_data_ = {type->name, type->eval_target, type->joint_pair};
  evaluation_ = type->evaluation;
  for (Evaluation e : type->evaluations) {
    if (config.eval_kind == EvaluationName(e)) evaluation_ = e;
  }
}

torch::Tensor Task::Logits(TaskModelImpl& model, const TaskBatch& batch) const {
  TORCH_CHECK(false, "task.loss ", loss(), " has no classifier");
  return torch::Tensor();
}

std::string ShortestNumber(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return absl::StrFormat("%.0f", v);  // 20, not 2e+01
  for (int precision = 1; precision < 17; ++precision) {
    std::string text = absl::StrFormat("%.*g", precision, v);
    if (std::strtod(text.c_str(), nullptr) == v) return text;
  }
  return absl::StrFormat("%.17g", v);
}

}  // namespace trainer
}  // namespace tunefleet
