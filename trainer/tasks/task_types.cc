#include "trainer/tasks/task_types.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace trainer {

const char* PrimaryMetric(Evaluation evaluation) {
  switch (evaluation) {
    case Evaluation::kAccuracy:
      return "eval/accuracy";
    case Evaluation::kRetrieval:
    case Evaluation::kReranking:
      return "eval/ndcg@10";  // the evaluators' primary metric in sentence-transformers
    case Evaluation::kSimilarity:
      break;
  }
  return "eval/spearman";
}

const char* EvaluationName(Evaluation evaluation) {
  switch (evaluation) {
    case Evaluation::kAccuracy:
      return "accuracy";
    case Evaluation::kRetrieval:
      return "retrieval";
    case Evaluation::kReranking:
      return "reranking";
    case Evaluation::kSimilarity:
      break;
  }
  return "similarity";
}

const std::vector<TaskType>& AllTaskTypes() {
  using E = Evaluation;
  static const auto* const kTypes = new std::vector<TaskType>{
      {"sts",
       "pairs with a score",
       RowTarget::kScore,
       false,
       RowTarget::kScore,
       E::kSimilarity,
       {E::kSimilarity, E::kRetrieval},
       "cosine"},
      {"mnrl",
       "anchor, positive and optional negatives",
       RowTarget::kPositivePairs,
       false,
       RowTarget::kScore,
       E::kSimilarity,
       {E::kSimilarity, E::kRetrieval},
       "mnrl"},
      {"nli",
       "pairs with a label",
       RowTarget::kLabel,
       false,
       RowTarget::kLabel,
       E::kAccuracy,
       {E::kAccuracy, E::kRetrieval},
       "softmax"},
      {"classification",
       "pairs with a label, as one text",
       RowTarget::kLabel,
       true,
       RowTarget::kLabel,
       E::kAccuracy,
       {E::kAccuracy},
       "softmax"},
      {"contrastive",
       "pairs labelled 0 or 1",
       RowTarget::kBinaryLabel,
       false,
       RowTarget::kBinaryLabel,
       E::kSimilarity,
       {E::kSimilarity, E::kRetrieval},
       "contrastive"},
      {"cross_encoder",
       "pairs with a score in [0, 1] or a 0/1 label, as one text",
       RowTarget::kScore,
       true,
       RowTarget::kScore,
       E::kReranking,
       {E::kReranking},
       "bce"},
  };
  return *kTypes;
}

const TaskType* FindTaskType(absl::string_view name) {
  for (const TaskType& type : AllTaskTypes()) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

std::string TaskTypeChoices() {
  std::vector<std::string> names;
  for (const TaskType& type : AllTaskTypes()) names.push_back(type.name);
  if (names.size() <= 1) return absl::StrJoin(names, "");
  return absl::StrCat(absl::StrJoin(names.begin(), names.end() - 1, ", "), " or ", names.back());
}

}  // namespace trainer
}  // namespace tunefleet
