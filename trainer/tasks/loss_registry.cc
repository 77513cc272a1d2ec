#include "trainer/tasks/loss_registry.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "trainer/tasks/all_losses.h"

namespace tunefleet {
namespace trainer {
namespace {

// "a", "a and b", "a, b and c".
std::string JoinAnd(const std::vector<std::string>& items) {
  if (items.size() <= 1) return absl::StrJoin(items, "");
  return absl::StrCat(absl::StrJoin(items.begin(), items.end() - 1, ", "), " and ", items.back());
}

// "task type X" or "task types X and Y".
std::string TypesText(const std::vector<std::string>& types) {
  return absl::StrCat(types.size() == 1 ? "task type " : "task types ", JoinAnd(types));
}

bool Takes(const LossKind& kind, const std::string& key) {
  return std::find(kind.keys.begin(), kind.keys.end(), key) != kind.keys.end();
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

absl::StatusOr<std::shared_ptr<const TaskSettings>> ReadTaskSection(const ConfigMap& task,
                                                                    const ConfigMap& model,
                                                                    const TrainerConfig& config) {
  const LossKind* kind = FindLossKind(config.task.type);
  if (kind == nullptr) return task.Error("type", "is not a registered task type");
  for (const std::string& key : KindKeys()) {
    const bool given = key == "num_labels" ? config.task.num_labels != 0 : task.Has(key);
    if (!given || Takes(*kind, key)) continue;
    std::vector<std::string> takers;
    for (const LossKind* k : AllLossKinds()) {
      if (Takes(*k, key)) takers.push_back(k->type);
    }
    std::sort(takers.begin(), takers.end());
    return task.Error(key, absl::StrCat("only applies to ", TypesText(takers)));
  }
  if (!config.model.head.empty()) {
    ASSIGN_OR_RETURN(TaskPtr built, MakeTask(config.task));
    if (!built->has_head()) {
      std::vector<std::string> with_head;
      for (const LossKind* k : AllLossKinds()) {
        if (k->build(TaskConfig{k->type})->has_head()) with_head.push_back(k->type);
      }
      return model.Error("head", absl::StrCat("only applies to ", TypesText(with_head)));
    }
  }
  if (kind->parse == nullptr) return std::shared_ptr<const TaskSettings>();
  return kind->parse(task);
}

}  // namespace

const LossKind* FindLossKind(absl::string_view type) {
  for (const LossKind* kind : AllLossKinds()) {
    if (kind->type == type) return kind;
  }
  return nullptr;
}

std::string TaskTypeChoices() {
  std::vector<std::string> types;
  for (const LossKind* kind : AllLossKinds()) types.push_back(kind->type);
  if (types.size() <= 1) return absl::StrJoin(types, "");
  return absl::StrCat(absl::StrJoin(types.begin(), types.end() - 1, ", "), " or ", types.back());
}

absl::StatusOr<TaskPtr> MakeTask(const TaskConfig& config) {
  const LossKind* kind = FindLossKind(config.type);
  if (kind == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown task type \"", config.type,
                                                   "\" (expected ", TaskTypeChoices(), ")"));
  }
  return kind->build(config);
}

absl::StatusOr<TaskPtr> MakeTask(absl::string_view type) {
  TaskConfig config;
  config.type = std::string(type);
  return MakeTask(config);
}

const TaskSectionReader& LossRegistryReader() {
  static const TaskSectionReader* const kReader = [] {
    auto* reader = new TaskSectionReader;
    for (const LossKind* kind : AllLossKinds()) reader->types.push_back(kind->type);
    reader->keys = KindKeys();
    reader->read = &ReadTaskSection;
    return reader;
  }();
  return *kReader;
}

}  // namespace trainer
}  // namespace tunefleet
