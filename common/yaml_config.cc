#include "common/yaml_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/clip.h"
#include "common/name_chars.h"
#include "common/status_macros.h"
#include "common/yaml_override.h"

namespace tunefleet {

struct ConfigFile::Source {
  std::string name;
  YAML::Node root;
  // Dotted key -> the override that set it, so errors can name the command-line argument.
  std::map<std::string, std::string> overrides;
};

namespace {

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsScalar()) return "'" + ClipValue(node.Scalar()) + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "an unknown node";
}

}  // namespace

ConfigFile::ConfigFile(std::shared_ptr<Source> source) : source_(std::move(source)) {}

absl::StatusOr<ConfigFile> ConfigFile::Parse(const std::string& text, const std::string& name) {
  auto source = std::make_shared<Source>();
  source->name = name;
  try {
    source->root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // e.msg is the bare reason; e.mark is 0-based.
    return absl::InvalidArgumentError(absl::StrCat(
        name, ":", e.mark.line + 1, ":", e.mark.column + 1, ": YAML syntax error: ", e.msg));
  }
  if (!source->root.IsDefined() || source->root.IsNull()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ":1: the file is empty"));
  }
  return ConfigFile(std::move(source));
}

absl::StatusOr<ConfigFile> ConfigFile::Load(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ClipPath(path), ": is a folder, not a file (name a YAML file)"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(ClipPath(path), ": cannot open file"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return Parse(buffer.str(), path);
}

const std::string& ConfigFile::name() const { return source_->name; }

absl::Status ConfigFile::ApplyOverride(const std::string& assignment) {
  return ApplyOverride(assignment, assignment);
}

absl::Status ConfigFile::ApplyOverride(const std::string& assignment, const std::string& shown_as) {
  const std::string where = absl::StrCat(source_->name, ": override '", ClipValue(shown_as), "'");
  std::string key;
  RETURN_IF_ERROR(ApplyYamlOverride(source_->root, assignment, where, source_->overrides, &key));
  if (!key.empty()) source_->overrides[key] = shown_as;
  return absl::OkStatus();
}

absl::Status ConfigFile::ApplyOverrides(const std::vector<std::string>& assignments) {
  for (const std::string& a : assignments) RETURN_IF_ERROR(ApplyOverride(a));
  return absl::OkStatus();
}

absl::StatusOr<ConfigMap> ConfigFile::Root() const {
  ConfigMap root(source_, source_->root, "");
  if (!source_->root.IsMap()) {
    return root.Error("", absl::StrCat("expected a mapping of keys at the top level, got ",
                                       Describe(source_->root)));
  }
  return root;
}

ConfigMap::ConfigMap(std::shared_ptr<ConfigFile::Source> source, YAML::Node node, std::string path)
    : source_(std::move(source)), node_(std::move(node)), path_(std::move(path)) {}

std::string ConfigMap::KeyPath(const std::string& key) const {
  if (key.empty()) return path_;
  return path_.empty() ? key : path_ + "." + key;
}

YAML::Node ConfigMap::Value(const std::string& key) const {
  const YAML::Node& map = node_;
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool ConfigMap::Has(const std::string& key) const { return Value(key).IsDefined(); }

bool ConfigMap::HasValue(const std::string& key) const {
  YAML::Node v = Value(key);
  return v.IsDefined() && !v.IsNull();
}

std::vector<std::string> ConfigMap::Keys() const {
  std::vector<std::string> keys;
  if (!node_.IsMap()) return keys;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    keys.push_back(it->first.IsScalar() ? it->first.Scalar() : "?");
  }
  return keys;
}

int ConfigMap::Line(const std::string& key) const {
  if (!key.empty() && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) {
        YAML::Mark mark = it->first.Mark();
        if (!mark.is_null()) return mark.line + 1;
        break;
      }
    }
  }
  YAML::Mark mark = node_.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

absl::Status ConfigMap::ErrorAt(const std::string& key_path, const YAML::Mark& mark,
                                const std::string& message) const {
  // A value that came from the command line is reported by its override.
  for (const auto& [key, assignment] : source_->overrides) {
    if (key_path == key || key_path.rfind(key + ".", 0) == 0 || key_path.rfind(key + "[", 0) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(source_->name, ": override '",
                                                     ClipValue(assignment),
                                                     "': ", ClipValue(key_path), ": ", message));
    }
  }
  std::string where = source_->name;
  if (!mark.is_null()) absl::StrAppend(&where, ":", mark.line + 1);
  if (key_path.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", message));
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", ClipValue(key_path), ": ", message));
}

absl::Status ConfigMap::Error(const std::string& key, const std::string& message) const {
  YAML::Mark mark = node_.Mark();
  if (!key.empty() && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) {
        mark = it->first.Mark();
        break;
      }
    }
  }
  return ErrorAt(KeyPath(key), mark, message);
}

absl::Status ConfigMap::AllowOnly(std::initializer_list<const char*> allowed) const {
  return AllowOnly(std::vector<std::string>(allowed.begin(), allowed.end()));
}

absl::Status ConfigMap::AllowOnly(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) return absl::OkStatus();
  std::set<std::string> allowed_set(allowed.begin(), allowed.end());
  std::map<std::string, int> seen;  // key -> line
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) {
      return ErrorAt(path_, it->first.Mark(), "keys must be plain names");
    }
    const std::string key = it->first.Scalar();
    const YAML::Mark mark = it->first.Mark();
    auto [prev, inserted] = seen.emplace(key, mark.is_null() ? 0 : mark.line + 1);
    if (!inserted) {
      return ErrorAt(KeyPath(key), mark,
                     absl::StrCat("duplicate key (first given on line ", prev->second, ")"));
    }
    if (allowed_set.count(key) == 0) {
      return ErrorAt(KeyPath(key), mark,
                     absl::StrCat("unknown key; expected one of: ", absl::StrJoin(allowed, ", ")));
    }
  }
  return absl::OkStatus();
}

bool ConfigMap::FromOverride(const std::string& key) const {
  const std::string key_path = KeyPath(key);
  for (const auto& [set, assignment] : source_->overrides) {
    if (key_path == set || key_path.rfind(set + ".", 0) == 0) return true;
  }
  return false;
}

absl::StatusOr<std::string> ConfigMap::AllowOnlyForChoice(
    const std::string& selector, const std::string& choice,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& keys_for) const {
  std::vector<std::string> allowed;
  for (const auto& [name, keys] : keys_for) {
    if (name == choice) allowed = keys;
  }
  // The choices that take `key`, other than `choice`.
  auto taken_by = [&](const std::string& key) {
    std::vector<std::string> names;
    for (const auto& [name, keys] : keys_for) {
      if (name != choice && std::find(keys.begin(), keys.end(), key) != keys.end()) {
        names.push_back(name);
      }
    }
    return names;
  };
  const bool selector_overridden = FromOverride(selector);
  std::vector<std::string> dropped;
  for (const std::string& key : Keys()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::vector<std::string> others = taken_by(key);
    if (others.empty()) continue;  // no choice takes it: AllowOnly says so below
    if (!FromOverride(key)) {
      if (selector_overridden) dropped.push_back(key);
      continue;  // the file's own mistake: AllowOnly says so below
    }
    return Error(
        key, absl::StrCat(selector, " ", choice, " does not take it (", absl::StrJoin(others, ", "),
                          others.size() == 1 ? " does" : " do", "); drop it, or set ",
                          KeyPath(selector), "=", others[0]));
  }
  std::vector<std::string> kept = allowed;
  kept.insert(kept.end(), dropped.begin(), dropped.end());
  RETURN_IF_ERROR(AllowOnly(kept));
  if (dropped.empty()) return std::string();
  std::string assignment;
  for (const auto& [set, text] : source_->overrides) {
    if (KeyPath(selector) == set) assignment = text;
  }
  return absl::StrCat(ClipValue(assignment), " (override): dropped ", absl::StrJoin(dropped, ", "),
                      " from ", source_->name);
}

absl::Status ConfigMap::Require(const std::string& key, YAML::Node* node) const {
  *node = Value(key);
  if (!node->IsDefined()) {
    return Error("", absl::StrCat("missing required key '", ClipValue(key), "'"));
  }
  if (node->IsNull()) return Error(key, "missing value");
  return absl::OkStatus();
}

template <typename T>
absl::Status ConfigMap::DecodeScalar(const std::string& key_path, const YAML::Node& node,
                                     const char* expected, T* out) const {
  T value;
  if (!node.IsScalar() || !YAML::convert<T>::decode(node, value)) {
    return ErrorAt(key_path, node.Mark(),
                   absl::StrCat("expected ", expected, ", got ", Describe(node)));
  }
  if constexpr (std::is_floating_point<T>::value) {
    if (!std::isfinite(value)) {
      return ErrorAt(key_path, node.Mark(),
                     absl::StrCat("expected a finite number, got ", Describe(node)));
    }
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ConfigMap::Get(const std::string& key, std::string* out) const {
  YAML::Node node;
  RETURN_IF_ERROR(Require(key, &node));
  if (!node.IsScalar()) {
    return ErrorAt(KeyPath(key), node.Mark(),
                   absl::StrCat("expected a string, got ", Describe(node)));
  }
  *out = node.Scalar();
  return absl::OkStatus();
}

absl::Status ConfigMap::Get(const std::string& key, int64_t* out) const {
  YAML::Node node;
  RETURN_IF_ERROR(Require(key, &node));
  return DecodeScalar(KeyPath(key), node, "an integer", out);
}

absl::Status ConfigMap::Get(const std::string& key, int* out) const {
  int64_t wide = 0;
  RETURN_IF_ERROR(Get(key, &wide));
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
    return Error(key, absl::StrCat("integer out of range: ", wide));
  }
  *out = static_cast<int>(wide);
  return absl::OkStatus();
}

absl::Status ConfigMap::Get(const std::string& key, double* out) const {
  YAML::Node node;
  RETURN_IF_ERROR(Require(key, &node));
  return DecodeScalar(KeyPath(key), node, "a number", out);
}

absl::Status ConfigMap::Get(const std::string& key, bool* out) const {
  YAML::Node node;
  RETURN_IF_ERROR(Require(key, &node));
  return DecodeScalar(KeyPath(key), node, "true or false", out);
}

template <typename T>
absl::Status ConfigMap::GetList(const std::string& key, const char* expected,
                                std::vector<T>* out) const {
  YAML::Node node;
  RETURN_IF_ERROR(Require(key, &node));
  if (!node.IsSequence()) {
    return ErrorAt(KeyPath(key), node.Mark(),
                   absl::StrCat("expected a list of ", expected, ", got ", Describe(node)));
  }
  std::vector<T> values;
  for (size_t i = 0; i < node.size(); ++i) {
    T value;
    RETURN_IF_ERROR(
        DecodeScalar(absl::StrCat(KeyPath(key), "[", i, "]"), node[i], expected, &value));
    values.push_back(value);
  }
  *out = std::move(values);
  return absl::OkStatus();
}

absl::Status ConfigMap::Get(const std::string& key, std::vector<int64_t>* out) const {
  return GetList(key, "integers", out);
}
absl::Status ConfigMap::Get(const std::string& key, std::vector<double>* out) const {
  return GetList(key, "numbers", out);
}
absl::Status ConfigMap::Get(const std::string& key, std::vector<std::string>* out) const {
  return GetList(key, "strings", out);
}

absl::Status ConfigMap::GetEnum(const std::string& key, const std::vector<std::string>& choices,
                                std::string* out, bool required) const {
  if (!required && !HasValue(key)) return absl::OkStatus();
  std::string value;
  RETURN_IF_ERROR(Get(key, &value));
  for (const std::string& c : choices) {
    if (c == value) {
      *out = value;
      return absl::OkStatus();
    }
  }
  return Error(key, absl::StrCat("expected one of ", absl::StrJoin(choices, ", "), "; got '",
                                 ClipValue(value), "'"));
}

absl::Status ConfigMap::GetYamlText(const std::string& key, std::string* out) const {
  YAML::Node node;
  RETURN_IF_ERROR(Require(key, &node));
  YAML::Emitter emitter;
  emitter.SetMapFormat(YAML::Flow);
  emitter.SetSeqFormat(YAML::Flow);
  emitter << node;
  *out = emitter.c_str();
  return absl::OkStatus();
}

bool ConfigMap::IsMap(const std::string& key) const { return Value(key).IsMap(); }

absl::StatusOr<ConfigMap> ConfigMap::GetMap(const std::string& key) const {
  YAML::Node node;
  RETURN_IF_ERROR(Require(key, &node));
  if (!node.IsMap()) {
    return ErrorAt(KeyPath(key), node.Mark(),
                   absl::StrCat("expected a mapping, got ", Describe(node)));
  }
  return ConfigMap(source_, node, KeyPath(key));
}

absl::StatusOr<ConfigMap> ConfigMap::GetOptionalMap(const std::string& key) const {
  if (!HasValue(key)) {
    YAML::Node empty(YAML::NodeType::Map);
    return ConfigMap(source_, empty, KeyPath(key));
  }
  return GetMap(key);
}

}  // namespace tunefleet
