#include "trainer/commands/cross_encoder_folder.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "trainer/model/classifier_heads.h"
#include "trainer/model/inference_model.h"
#include "trainer/model/model_family_registry.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/loss_registry.h"

namespace tunefleet {
namespace trainer {

absl::StatusOr<CrossEncoderFolder> LoadCrossEncoderFolder(const std::string& dir,
                                                          int64_t max_len_flag) {
  absl::StatusOr<InferenceModel> loaded = LoadInferenceModel(dir);
  if (!loaded.ok()) return loaded.status();
  const ModelFamily& family = FamilyOf(loaded->info.config);
  if (family.classifier_head() == ClassifierHead::kNone) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": model_type ", family.model_type(),
                                                   " has no sequence classification head"));
  }
  const ParameterShapeList shapes = ClassifierHeadShapes(family.classifier_head(), 0, 0);
  const int64_t labels = ClassifierHeadLabels(loaded->info.head);
  if (labels == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": not a cross-encoder: its weights have no ", shapes.back().first,
                     " (a ", family.classifier_architecture(), " folder has one)"));
  }
  CrossEncoderFolder out;
  out.num_labels = labels;
  absl::StatusOr<TaskPtr> task = MakeTask(out.num_labels == 1 ? "cross_encoder" : "classification");
  if (!task.ok()) return task.status();
  out.model = TaskModel(loaded->bert, Pooling::kCls, *task, out.num_labels);
  if (absl::Status s = out.model->LoadHead(loaded->info.head); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(dir, ": ", s.message()));
  }
  out.model->eval();
  out.tokenizer = loaded->tokenizer;
  out.max_len = max_len_flag > 0 ? std::min(max_len_flag, MaxSequenceLength(loaded->info.config))
                                 : MaxSequenceLength(loaded->info.config);
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
