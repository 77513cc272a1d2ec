#include "trainer/tasks/task_types.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace trainer {

const char* PrimaryMetric(Evaluation evaluation) {
  switch (evaluation) {
    case Evaluation::kAccuracy:
    case Evaluation::kTriplet:
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
    case Evaluation::kTriplet:
      return "triplet";
    case Evaluation::kSimilarity:
      break;
  }
  return "similarity";
}

namespace {

using E = Evaluation;

// Pairs with a score or a label (issues 1-35, 50).
std::vector<TaskType> PairTypes() {
  return {
      {"sts",
       "pairs with a score",
       RowTarget::kScore,
       false,
       RowTarget::kScore,
       E::kSimilarity,
       {E::kSimilarity, E::kRetrieval, E::kTriplet},
       "cosine"},
      {"mnrl",
       "anchor, positive and optional negatives",
       RowTarget::kPositivePairs,
       false,
       RowTarget::kScore,
       E::kSimilarity,
       {E::kSimilarity, E::kRetrieval, E::kTriplet},
       "mnrl"},
      {"nli",
       "pairs with a label",
       RowTarget::kLabel,
       false,
       RowTarget::kLabel,
       E::kAccuracy,
       {E::kAccuracy, E::kRetrieval, E::kTriplet},
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
       {E::kSimilarity, E::kRetrieval, E::kTriplet},
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
}

// Rows for ranking and distillation: a cross-encoder's in-batch negatives, margins and lists,
// a bi-encoder's margins and teacher embeddings (issue 50).
std::vector<TaskType> RankingTypes() {
  return {
      {"cross_encoder_mnrl",
       "anchor, positive and optional negatives, each (anchor, candidate) as one text",
       RowTarget::kPositivePairs,
       true,
       RowTarget::kScore,
       E::kReranking,
       {E::kReranking},
       "mnrl"},
      {"cross_encoder_margin",
       "query, positive, negatives and a teacher's margin, each (query, text) as one text",
       RowTarget::kMargin,
       true,
       RowTarget::kScore,
       E::kReranking,
       {E::kReranking},
       "margin_mse"},
      {"cross_encoder_list",
       "a query, a list of documents and a relevance each, each (query, document) as one text",
       RowTarget::kList,
       true,
       RowTarget::kScore,
       E::kReranking,
       {E::kReranking},
       "lambda"},
      {"margin",
       "query, positive, negatives and a teacher's margin",
       RowTarget::kMargin,
       false,
       RowTarget::kScore,
       E::kSimilarity,
       {E::kSimilarity, E::kRetrieval, E::kTriplet},
       "margin_mse"},
      {"embedding",
       "a text and a teacher's embedding",
       RowTarget::kVector,
       false,
       RowTarget::kScore,
       E::kSimilarity,
       {E::kSimilarity, E::kRetrieval, E::kTriplet},
       "mse"},
  };
}

}  // namespace

const std::vector<TaskType>& AllTaskTypes() {
  static const auto* const kTypes = [] {
    auto* types = new std::vector<TaskType>(PairTypes());
    for (TaskType& t : RankingTypes()) types->push_back(std::move(t));
    return types;
  }();
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
