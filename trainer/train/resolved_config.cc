#include "trainer/train/resolved_config.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <type_traits>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace tunefleet {
namespace trainer {
namespace {

std::string Absolute(const std::string& path, const std::string& base) {
  if (path.empty() || path.front() == '/') return path;
  return JoinPath(base, path);
}

// The shortest decimal that reads back as `v` (0.000775761811, not 0.00077576181100000003).
std::string Shortest(double v) {
  for (int precision = 1; precision <= 17; ++precision) {
    const std::string text = absl::StrFormat("%.*g", precision, v);
    if (std::strtod(text.c_str(), nullptr) == v) return text;
  }
  return absl::StrFormat("%.17g", v);
}

// A double, emitted as its shortest text (yaml-cpp writes number-like text plain).
struct Number {
  double v;
};
YAML::Emitter& operator<<(YAML::Emitter& out, const Number& n) { return out << Shortest(n.v); }

// Whether a value is empty (an empty string or list; numbers and booleans never are).
bool IsEmpty(const FieldValue& value) {
  return std::visit(
      [](const auto& v) {
        if constexpr (std::is_arithmetic_v<std::decay_t<decltype(v)>>) {
          return false;
        } else {
          return v.empty();
        }
      },
      value);
}

// One key of the schema with its value: paths absolute, numbers shortest, lists in flow style;
// a key written only when set is left out when empty, one written null when empty is `~`.
void EmitField(const ConfigField& f, const TrainerConfig& c, const std::string& base,
               YAML::Emitter& out) {
  const FieldValue value = ValueOf(f, c);
  if (f.written == Written::kWhenSet && IsEmpty(value)) return;
  if (f.key == "task.train" && !c.task.datasets.empty()) return;  // each dataset names its file
  out << YAML::Key << NameOf(f) << YAML::Value;
  if (f.written == Written::kNullWhenEmpty && IsEmpty(value)) {
    out << YAML::Null;
    return;
  }
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          out << Number{v};
        } else if constexpr (std::is_same_v<T, std::string>) {
          out << (f.path != PathKind::kNone ? Absolute(v, base) : v);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          out << YAML::Flow << YAML::BeginSeq;
          for (double d : v) out << Number{d};
          out << YAML::EndSeq;
        } else if constexpr (std::is_arithmetic_v<T>) {
          out << v;
        } else {
          out << YAML::Flow << v;
        }
      },
      value);
}

// A dataset's prompts: the string, the map, or nothing.
void EmitPrompts(const DatasetConfig& d, YAML::Emitter& out) {
  if (d.prompt.empty() && d.prompts.empty()) return;
  out << YAML::Key << "prompts" << YAML::Value;
  if (d.prompts.empty()) {
    out << d.prompt;
  } else {
    out << YAML::Flow << d.prompts;
  }
}

// The task section's keys beyond the schema's: the loss's own keys (trainer/tasks/task.h; with
// task.datasets, every dataset's loss's, once each) and task.datasets.
void EmitTaskExtras(const TrainerConfig& c, const std::string& base, YAML::Emitter& out) {
  std::vector<std::string> written;
  std::vector<const TaskSettings*> settings = {c.task.settings.get()};
  for (const DatasetConfig& d : c.task.datasets) settings.push_back(d.settings.get());
  for (const TaskSettings* s : settings) {
    if (s == nullptr) continue;
    for (const auto& [key, value] : s->Values()) {
      if (std::find(written.begin(), written.end(), key) != written.end()) continue;
      written.push_back(key);
      out << YAML::Key << key << YAML::Value << value;
    }
  }
  if (c.task.datasets.empty()) return;
  out << YAML::Key << kDatasetsKey << YAML::Value << YAML::BeginMap;
  for (const DatasetConfig& d : c.task.datasets) {
    out << YAML::Key << d.name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "train" << YAML::Value << Absolute(d.train, base);
    out << YAML::Key << "format" << YAML::Value << d.format;
    if (!d.columns.empty()) out << YAML::Key << "columns" << YAML::Value << YAML::Flow << d.columns;
    if (!d.label_column.empty())
      out << YAML::Key << "label_column" << YAML::Value << d.label_column;
    out << YAML::Key << "loss" << YAML::Value << d.loss;
    EmitPrompts(d, out);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

std::string WorkingDirectory() {
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof(buf)) != nullptr ? std::string(buf) : std::string(".");
}

}  // namespace

std::string ResolvedConfigYaml(const TrainerConfig& c, const std::string& base_dir,
                               const std::vector<std::string>& overrides) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  const std::vector<ConfigField>& fields = TrainerConfigFields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string section = SectionOf(fields[i]);
    if (i == 0 || SectionOf(fields[i - 1]) != section) {
      out << YAML::Key << section << YAML::Value << YAML::BeginMap;
    }
    EmitField(fields[i], c, base_dir, out);
    if (i + 1 < fields.size() && SectionOf(fields[i + 1]) == section) continue;
    if (section == kTaskSection) EmitTaskExtras(c, base_dir, out);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  std::string header = absl::StrCat(
      "# The resolved config of a `trainer train` run: every key with the value it trained with,\n"
      "# paths absolute. From ",
      Absolute(c.source, base_dir), " in ", base_dir,
      overrides.empty() ? "" : absl::StrCat(", with ", absl::StrJoin(overrides, " ")),
      ".\n# Re-run it: trainer train --config THIS_FILE output.dir=ANOTHER_DIR\n");
  return absl::StrCat(header, out.c_str(), "\n");
}

absl::Status WriteResolvedConfig(const TrainerConfig& config,
                                 const std::vector<std::string>& overrides, int world_size) {
  TrainerConfig c = config;
  if (world_size > 1) {
    c.train.devices = world_size;
    c.train.gpu_ids.clear();
  }
  const std::string base = WorkingDirectory();
  const std::string dir = JoinPath(Absolute(c.output.dir, base), kResolvedConfigDir);
  RETURN_IF_ERROR(MakeDirs(dir));
  RETURN_IF_ERROR(
      WriteFileAtomically(JoinPath(dir, "config.yaml"), ResolvedConfigYaml(c, base, overrides)));
  YAML::Emitter list;
  list << YAML::BeginSeq;
  for (const std::string& o : overrides) list << o;
  list << YAML::EndSeq;
  return WriteFileAtomically(JoinPath(dir, "overrides.yaml"), absl::StrCat(list.c_str(), "\n"));
}

}  // namespace trainer
}  // namespace tunefleet
