#include "trainer/tasks/loss_registry.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "trainer/tasks/all_losses.h"

namespace tunefleet {
namespace trainer {
namespace {

// "a", "a and b", "a, b and c" (or "or").
std::string Join(const std::vector<std::string>& items, const char* last = " and ") {
  if (items.size() <= 1) return absl::StrJoin(items, "");
  return absl::StrCat(absl::StrJoin(items.begin(), items.end() - 1, ", "), last, items.back());
}

bool Takes(const LossKind& kind, const std::string& key) {
  return std::find(kind.keys.begin(), kind.keys.end(), key) != kind.keys.end();
}

bool Fits(const LossKind& kind, const std::string& type) {
  return std::find(kind.types.begin(), kind.types.end(), type) != kind.types.end();
}

// Every key some kind takes, in the registry's order.
std::vector<std::string> KindKeys() {
  std::vector<std::string> keys;
  for (const LossKind* kind : AllLossKinds()) {
    for (const std::string& key : kind->keys) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  }
  return keys;
}

// The losses for which `pred` holds.
template <typename Pred>
std::vector<std::string> LossesWhere(Pred pred) {
  std::vector<std::string> names;
  for (const LossKind* k : AllLossKinds()) {
    if (pred(*k)) names.push_back(k->loss);
  }
  return names;
}

std::string ResolvedLoss(const TaskConfig& task) {
  if (!task.loss.empty()) return task.loss;
  const TaskType* type = FindTaskType(task.type);
  return type != nullptr ? type->default_loss : "";
}

// The loss kind of `task`, or an error (through `error`) naming why it does not fit.
template <typename ErrorFn>
absl::StatusOr<const LossKind*> KindFor(const TaskConfig& task, ErrorFn error) {
  const TaskType* type = FindTaskType(task.type);
  if (type == nullptr) {
    return error("type", absl::StrCat("unknown task type \"", task.type, "\" (expected ",
                                      TaskTypeChoices(), ")"));
  }
  const std::string loss = ResolvedLoss(task);
  const LossKind* kind = FindLossKind(loss);
  if (kind == nullptr) {
    return error("loss",
                 absl::StrCat("unknown task.loss \"", loss, "\" (expected ", LossChoices(), ")"));
  }
  if (!Fits(*kind, type->name)) {
    const auto fitting = LossesWhere([&](const LossKind& k) { return Fits(k, type->name); });
    return error("loss", absl::StrCat(loss, " does not fit task type ", type->name, " (",
                                      type->data, "): use ", Join(fitting, " or ")));
  }
  return kind;
}

absl::Status CheckEvalKind(const ConfigMap& task, const TaskConfig& config) {
  if (config.eval_kind.empty()) return absl::OkStatus();
  const TaskType* type = FindTaskType(config.type);
  std::vector<std::string> allowed;
  for (Evaluation e : type->evaluations) {
    if (config.eval_kind == EvaluationName(e)) return absl::OkStatus();
    allowed.push_back(EvaluationName(e));
  }
  return task.Error("eval_kind",
                    absl::StrCat(config.eval_kind, " does not fit task type ", config.type,
                                 " (it takes ", Join(allowed, " or "), ")"));
}

// task.type when the YAML leaves it out: the one type task.loss fits, or for a cross-encoder
// without a loss, cross_encoder (whose default loss is bce).
absl::Status InferType(const ConfigMap& task, const ModelConfig& model, TaskConfig* config) {
  if (!config->type.empty()) return absl::OkStatus();
  if (config->loss.empty()) {
    if (model.kind == "cross_encoder") {
      config->type = "cross_encoder";
      return absl::OkStatus();
    }
    return task.Error("type", absl::StrCat("is required unless task.loss names the rows (",
                                           TaskTypeChoices(), ")"));
  }
  const LossKind* kind = FindLossKind(config->loss);
  if (kind == nullptr) {
    return task.Error("loss", absl::StrCat("unknown task.loss \"", config->loss, "\" (expected ",
                                           LossChoices(), ")"));
  }
  std::vector<std::string> types = kind->types;
  if (model.kind == "cross_encoder" || types.size() > 1) {
    // A loss that fits a bi-encoder and a cross-encoder type: the model's kind decides.
    std::vector<std::string> kept;
    for (const std::string& t : types) {
      const TaskType* type = FindTaskType(t);
      if (type != nullptr && type->joint_pair == (model.kind == "cross_encoder")) kept.push_back(t);
    }
    if (kept.empty() && model.kind == "cross_encoder") {
      const auto joint = LossesWhere([](const LossKind& k) {
        return std::any_of(k.types.begin(), k.types.end(), [](const std::string& t) {
          const TaskType* type = FindTaskType(t);
          return type != nullptr && type->joint_pair;
        });
      });
      return task.Error("loss", absl::StrCat(config->loss,
                                             " does not fit model.kind: "
                                             "cross_encoder (a pair as one text): use ",
                                             Join(joint, " or ")));
    }
    if (!kept.empty()) types = kept;
  }
  if (types.size() != 1) {
    return task.Error("type", absl::StrCat("is required: task.loss ", config->loss, " fits ",
                                           Join(types, " and ")));
  }
  config->type = types.front();
  return absl::OkStatus();
}

// model.kind against the task type: a cross-encoder trains on pairs as one text, a bi-encoder
// on texts apart; model.num_labels is the head's width for cross_encoder (1 for bce).
absl::Status CheckModelKind(const ConfigMap& model, const TrainerConfig& config) {
  const TaskType* type = FindTaskType(config.task.type);
  const bool cross = config.model.kind == "cross_encoder";
  if (type != nullptr && cross && !type->joint_pair) {
    return model.Error("kind", absl::StrCat("cross_encoder does not fit task type ", type->name,
                                            " (texts encoded apart): use task.loss bce, or "
                                            "task.type classification"));
  }
  const bool one_output = absl::StartsWith(config.task.type, "cross_encoder");
  if (type != nullptr && !cross && one_output) {
    return model.Error("kind", absl::StrCat("must be cross_encoder for task type ", type->name));
  }
  if (config.model.num_labels != 1 && (!cross || one_output)) {
    return model.Error("num_labels",
                       cross ? absl::StrCat("must be 1 for task type ", config.task.type,
                                            " (one logit a pair), got ", config.model.num_labels)
                             : std::string("only applies to model.kind: cross_encoder"));
  }
  return absl::OkStatus();
}

// Whether a loss of task.datasets takes `key` (the loss's keys are the section's, shared).
bool DatasetTakes(const TaskConfig& task, const std::string& key) {
  return std::any_of(task.datasets.begin(), task.datasets.end(), [&](const DatasetConfig& d) {
    const LossKind* kind = FindLossKind(d.loss);
    return kind != nullptr && Takes(*kind, key);
  });
}

// An entry of task.datasets: its type from its loss (task.type when no loss is named), the loss
// fitting it and model.kind, and its settings from the task section.
absl::Status ReadDatasetEntry(const ConfigMap& task, const ConfigMap& entry,
                              const TrainerConfig& config, DatasetConfig* d) {
  TaskConfig t = DatasetTask(config.task, *d);
  t.type = d->loss.empty() ? config.task.type : "";
  RETURN_IF_ERROR(InferType(entry, config.model, &t));
  TrainerConfig as_one = config;
  as_one.task = t;
  if (!CheckModelKind(entry, as_one).ok()) {
    return entry.Error("loss", absl::StrCat(ResolvedLoss(t), " (task type ", t.type,
                                            ") does not fit model.kind ", config.model.kind));
  }
  ASSIGN_OR_RETURN(const LossKind* kind, KindFor(t, [&](const char*, const std::string& message) {
                     return entry.Error("loss", message);
                   }));
  d->type = t.type;
  d->loss = kind->loss;
  if (kind->parse_typed != nullptr) {
    ASSIGN_OR_RETURN(d->settings, kind->parse_typed(task, t.type));
  } else if (kind->parse != nullptr) {
    ASSIGN_OR_RETURN(d->settings, kind->parse(task));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const TaskSettings>> ReadTaskSection(const ConfigMap& task,
                                                                    const ConfigMap& model,
                                                                    TrainerConfig* mutable_config) {
  RETURN_IF_ERROR(InferType(task, mutable_config->model, &mutable_config->task));
  const TrainerConfig& config = *mutable_config;
  RETURN_IF_ERROR(CheckModelKind(model, config));
  ASSIGN_OR_RETURN(const LossKind* kind,
                   KindFor(config.task, [&](const char* key, const std::string& message) {
                     return task.Error(key, message);
                   }));
  for (const std::string& key : KindKeys()) {
    const bool given = key == "num_labels" ? config.task.num_labels != 0 : task.Has(key);
    if (!given || Takes(*kind, key) || DatasetTakes(config.task, key)) continue;
    auto takers = LossesWhere([&](const LossKind& k) { return Takes(k, key); });
    return task.Error(key, absl::StrCat("only applies to task.loss ", Join(takers)));
  }
  if (!config.task.matryoshka_dims.empty() && !kind->embeddings) {
    auto takers = LossesWhere([](const LossKind& k) { return k.embeddings; });
    return task.Error("matryoshka_dims", absl::StrCat("only applies to losses over embeddings (",
                                                      Join(takers, " or "), "), not ", kind->loss));
  }
  RETURN_IF_ERROR(CheckEvalKind(task, config.task));
  if (!config.model.head.empty()) {
    TaskConfig resolved = config.task;
    resolved.loss = kind->loss;
    if (!kind->build(resolved)->has_head()) {
      auto with_head = LossesWhere([&](const LossKind& k) {
        return std::any_of(k.types.begin(), k.types.end(), [&](const std::string& type) {
          TaskConfig c;
          c.type = type;
          c.loss = k.loss;
          return k.build(c)->has_head();
        });
      });
      return model.Error("head", absl::StrCat("only applies to task.loss ", Join(with_head)));
    }
  }
  if (kind->parse_typed != nullptr) return kind->parse_typed(task, config.task.type);
  if (kind->parse == nullptr) return std::shared_ptr<const TaskSettings>();
  return kind->parse(task);
}

void Resolve(TaskConfig* task) {
  task->loss = ResolvedLoss(*task);
  const TaskType* type = FindTaskType(task->type);
  if (task->eval_kind.empty() && type != nullptr)
    task->eval_kind = EvaluationName(type->evaluation);
}

}  // namespace

const LossKind* FindLossKind(absl::string_view loss) {
  for (const LossKind* kind : AllLossKinds()) {
    if (kind->loss == loss) return kind;
  }
  return nullptr;
}

std::string LossChoices() {
  return Join(LossesWhere([](const LossKind&) { return true; }), " or ");
}

absl::StatusOr<TaskPtr> MakeTask(const TaskConfig& config) {
  ASSIGN_OR_RETURN(const LossKind* kind,
                   KindFor(config, [](const char* key, const std::string& message) {
                     return absl::InvalidArgumentError(message);
                   }));
  TaskConfig resolved = config;
  Resolve(&resolved);
  return kind->build(resolved);
}

absl::StatusOr<TaskPtr> MakeTask(absl::string_view type) {
  TaskConfig config;
  config.type = std::string(type);
  return MakeTask(config);
}

const TaskSectionReader& LossRegistryReader() {
  static const TaskSectionReader* const kReader = [] {
    auto* reader = new TaskSectionReader;
    for (const TaskType& type : AllTaskTypes()) reader->types.push_back(type.name);
    for (const LossKind* kind : AllLossKinds()) reader->losses.push_back(kind->loss);
    reader->keys = KindKeys();
    reader->read = &ReadTaskSection;
    reader->resolve = &Resolve;
    reader->read_dataset = &ReadDatasetEntry;
    return reader;
  }();
  return *kReader;
}

}  // namespace trainer
}  // namespace tunefleet
