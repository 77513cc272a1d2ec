#include "trainer/config/train_config.h"

#include <algorithm>
#include <map>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace trainer {
namespace {

const TaskSectionReader* task_reader = nullptr;

// "must be REQUIREMENT, got V" / "must be in [lo, hi], got V", V as the member's type prints.
absl::Status CheckBound(const ConfigField& f, const FieldContext& x) {
  return std::visit(
      [&](auto* p) -> absl::Status {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_arithmetic_v<T>) {
          const double v = static_cast<double>(*p);
          if (f.in_range && (v < f.lo || v > f.hi)) {
            return x.section.Error(x.name,
                                   absl::StrCat("must be in [", f.lo, ", ", f.hi, "], got ", *p));
          }
          if (!f.in_range && v < f.lo) {
            return x.section.Error(x.name, absl::StrCat("must be ", f.requirement, ", got ", *p));
          }
        }
        return absl::OkStatus();
      },
      f.member(*x.config));
}

absl::Status ReadField(const ConfigField& f, const FieldContext& x,
                       const std::vector<std::string>* choices) {
  if (f.read != nullptr) {
    RETURN_IF_ERROR(f.read(x));
  } else {
    const ConfigMap& m = x.section;
    const FieldPtr member = f.member(*x.config);
    if (choices == nullptr && !f.choices.empty()) choices = &f.choices;
    if (choices != nullptr) {
      RETURN_IF_ERROR(m.GetEnum(x.name, *choices, std::get<std::string*>(member), f.required));
    } else {
      RETURN_IF_ERROR(std::visit(
          [&](auto* p) { return f.required ? m.Get(x.name, p) : m.GetOptional(x.name, p); },
          member));
    }
    if (!f.if_empty.empty() && std::get<std::string*>(member)->empty()) {
      return m.Error(x.name, f.if_empty);
    }
  }
  if (f.bounded) RETURN_IF_ERROR(CheckBound(f, x));
  if (f.check != nullptr) RETURN_IF_ERROR(f.check(x));
  return absl::OkStatus();
}

// The sections of the table, in order, each with whether it is required (has a required key).
std::vector<std::pair<std::string, bool>> Sections() {
  std::vector<std::pair<std::string, bool>> sections;
  for (const ConfigField& f : TrainerConfigFields()) {
    const std::string section = SectionOf(f);
    if (sections.empty() || sections.back().first != section) sections.push_back({section, false});
    sections.back().second = sections.back().second || f.required;
  }
  return sections;
}

// The enum choices the loss registry gives a row, or null (the row's own, or any value).
const std::vector<std::string>* RegistryChoices(const ConfigField& f) {
  if (task_reader == nullptr) return nullptr;
  if (f.choices_from == ChoicesFrom::kTaskTypes) return &task_reader->types;
  if (f.choices_from == ChoicesFrom::kTaskLosses) return &task_reader->losses;
  return nullptr;
}

// Reads the keys of `section` (its mapping `m`) into `config`, in the table's order.
absl::Status ParseSection(const ConfigMap& m, const std::string& section, int local_gpus,
                          TrainerConfig* config) {
  std::vector<std::string> allowed;
  for (const ConfigField& f : TrainerConfigFields()) {
    if (SectionOf(f) == section) allowed.push_back(NameOf(f));
  }
  if (section == kTaskSection && task_reader != nullptr) {
    for (const std::string& key : task_reader->keys) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) allowed.push_back(key);
    }
  }
  if (section == kTaskSection) allowed.push_back(kDatasetsKey);
  RETURN_IF_ERROR(m.AllowOnly(allowed));
  for (const ConfigField& f : TrainerConfigFields()) {
    if (SectionOf(f) != section) continue;
    const std::string name = NameOf(f);
    RETURN_IF_ERROR(ReadField(f, FieldContext{m, name, config, local_gpus}, RegistryChoices(f)));
  }
  return absl::OkStatus();
}

// task.datasets (trainer/config/datasets_key.h), each entry's type and loss through the loss
// registry; then, when the YAML names neither task.type nor task.loss, the first dataset's.
absl::Status ReadDatasets(const ConfigMap& task, TrainerConfig* config) {
  RETURN_IF_ERROR(ReadDatasetsKey(task, config));
  if (config->task.datasets.empty() || task_reader == nullptr) return absl::OkStatus();
  ASSIGN_OR_RETURN(ConfigMap entries, task.GetMap(kDatasetsKey));
  for (DatasetConfig& d : config->task.datasets) {
    ASSIGN_OR_RETURN(ConfigMap entry, entries.GetMap(d.name));
    RETURN_IF_ERROR(task_reader->read_dataset(task, entry, *config, &d));
  }
  if (config->task.type.empty() && config->task.loss.empty()) {
    config->task.type = config->task.datasets.front().type;
    config->task.loss = config->task.datasets.front().loss;
  }
  return absl::OkStatus();
}

// A value as the help shows a default: "" for an empty one.
std::string DefaultText(const FieldValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_arithmetic_v<T>) {
          return absl::StrCat(v);
        } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
          return v.empty()
                     ? ""
                     : absl::StrCat("{", absl::StrJoin(v, ", ", absl::PairFormatter(": ")), "}");
        } else {
          return v.empty() ? "" : absl::StrCat("[", absl::StrJoin(v, ", "), "]");
        }
      },
      value);
}

}  // namespace

absl::StatusOr<TrainerConfig> ParseTrainerConfig(const ConfigFile& file, int local_gpus) {
  ASSIGN_OR_RETURN(ConfigMap root, file.Root());
  const std::vector<std::pair<std::string, bool>> sections = Sections();
  std::vector<std::string> names;
  for (const auto& [name, required] : sections) names.push_back(name);
  RETURN_IF_ERROR(root.AllowOnly(names));
  TrainerConfig config;
  config.source = file.name();
  std::map<std::string, ConfigMap> maps;
  for (const auto& [name, required] : sections) {
    ASSIGN_OR_RETURN(ConfigMap m, required ? root.GetMap(name) : root.GetOptionalMap(name));
    RETURN_IF_ERROR(ParseSection(m, name, local_gpus, &config));
    if (name == kTaskSection) RETURN_IF_ERROR(ReadDatasets(m, &config));
    maps.emplace(name, m);
    if (name == kTaskSection && task_reader != nullptr) {
      // The type's keys, and model.head, which depends on it.
      ASSIGN_OR_RETURN(config.task.settings, task_reader->read(m, maps.at(kModelSection), &config));
      task_reader->resolve(&config.task);
    }
  }
  return config;
}

absl::StatusOr<TrainerConfig> LoadTrainerConfig(const std::string& path,
                                                const std::vector<std::string>& overrides,
                                                int local_gpus) {
  ASSIGN_OR_RETURN(ConfigFile file, ConfigFile::Load(path));
  RETURN_IF_ERROR(file.ApplyOverrides(overrides));
  return ParseTrainerConfig(file, local_gpus);
}

void SetTaskSectionReader(const TaskSectionReader* reader) { task_reader = reader; }

int64_t LocalRankCount(const TrainConfig& train, int local_gpus) {
  if (train.devices == -1) return local_gpus > 0 ? local_gpus : 1;
  return train.devices;
}

std::string TrainerConfigHelp() {
  const TrainerConfig defaults;
  std::string text = "The trainer YAML's keys, with their defaults (key=value sets one):\n";
  for (const ConfigField& f : TrainerConfigFields()) {
    std::string line = absl::StrCat("  ", f.key);
    const std::string value = DefaultText(ValueOf(f, defaults));
    if (f.required) {
      absl::StrAppend(&line, " (required)");
    } else if (!value.empty()) {
      absl::StrAppend(&line, " = ", value);
    }
    line.resize(std::max<size_t>(line.size() + 2, 38), ' ');
    absl::StrAppend(&text, line, f.help);
    if (!f.choices.empty()) absl::StrAppend(&text, ": ", absl::StrJoin(f.choices, "|"));
    absl::StrAppend(&text, "\n");
  }
  return text;
}

}  // namespace trainer
}  // namespace tunefleet
