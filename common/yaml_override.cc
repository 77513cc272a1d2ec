#include "common/yaml_override.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/clip.h"
#include "common/name_chars.h"

namespace tunefleet {

namespace {

bool ValidKeyPart(const std::string& part) { return !part.empty() && AllAlnumOr(part, "_-"); }

bool HasScalarKey(const YAML::Node& map, const std::string& key) {
  if (!map.IsMap()) return false;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return true;
  }
  return false;
}

// The text of a value, to compare what `~key=VALUE` names with what the file holds.
std::string ValueText(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter emitter;
  emitter.SetMapFormat(YAML::Flow);
  emitter.SetSeqFormat(YAML::Flow);
  emitter << node;
  return emitter.c_str();
}

bool SameValue(const YAML::Node& a, const YAML::Node& b) {
  if (ValueText(a) == ValueText(b)) return true;
  double x, y;  // 1e-5 and 1.0e-05 are the same number
  return a.IsScalar() && b.IsScalar() && absl::SimpleAtod(a.Scalar(), &x) &&
         absl::SimpleAtod(b.Scalar(), &y) && x == y;
}

// Hydra's forms: +key=value adds, ++key=value adds or sets, ~key[=value] removes.
enum class Op { kSet, kAdd, kRemove };

// One assignment, parsed and checked.
struct Override {
  Op op = Op::kSet;
  std::string body;                // the assignment without its +, ++ or ~
  std::string key;                 // the dotted key
  std::vector<std::string> parts;  // the key split at its dots
  bool has_value = false;
  std::string text;  // the value as written
  YAML::Node value;  // the value parsed as YAML
};

absl::StatusOr<Override> ParseOverride(const std::string& assignment, const std::string& where) {
  Override o;
  size_t skip = 0;
  if (absl::StartsWith(assignment, "++")) {
    skip = 2;
  } else if (absl::StartsWith(assignment, "+")) {
    o.op = Op::kAdd;
    skip = 1;
  } else if (absl::StartsWith(assignment, "~")) {
    o.op = Op::kRemove;
    skip = 1;
  }
  o.body = assignment.substr(skip);
  const size_t eq = o.body.find('=');
  if ((eq == std::string::npos && o.op != Op::kRemove) || eq == 0 || o.body.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, o.op == Op::kRemove ? ": expected ~key or ~key=value" : ": expected key=value"));
  }
  o.key = o.body.substr(0, eq);
  o.has_value = eq != std::string::npos;
  o.text = o.has_value ? o.body.substr(eq + 1) : "";
  o.parts = absl::StrSplit(o.key, '.');
  for (const std::string& part : o.parts) {
    if (!ValidKeyPart(part)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": '", ClipValue(o.key), "' is not a dotted key such as train.lr"));
    }
  }
  if (o.has_value) {
    if (absl::StripAsciiWhitespace(o.text).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": empty value"));
    }
    try {
      o.value = YAML::Load(o.text);
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": cannot parse value: ", e.msg));
    }
  }
  return o;
}

// The end of the key at this level, parts [i, end): the longest run of parts that the file
// writes as one key with dots in it (`parameters: {train.weight_decay: ...}`), else the next
// part alone.
size_t KeyEnd(const YAML::Node& current, const std::vector<std::string>& parts, size_t i) {
  for (size_t j = parts.size(); j > i + 1; --j) {
    if (HasScalarKey(current, absl::StrJoin(parts.begin() + i, parts.begin() + j, "."))) return j;
  }
  return i + 1;
}

// Where the last key's value came from: an earlier override, or the file's line ("" if
// neither).
std::string WhereSet(const Override& o, const YAML::Node& current, const std::string& part,
                     bool present, const std::map<std::string, std::string>& earlier) {
  std::string at;
  for (const auto& [set, shown] : earlier) {
    if (o.key == set || absl::StartsWith(o.key, set + ".")) {
      at = absl::StrCat(" (by override '", ClipValue(shown), "')");
    }
  }
  if (at.empty() && present && !current[part].Mark().is_null()) {
    at = absl::StrCat(" (line ", current[part].Mark().line + 1, ")");
  }
  return at;
}

// Sets, adds or removes the last key, `part` of `current`.
absl::Status ApplyAtLeaf(const Override& o, YAML::Node& current, const std::string& part,
                         const std::string& where,
                         const std::map<std::string, std::string>& earlier) {
  const bool present = HasScalarKey(current, part);
  const std::string at = WhereSet(o, current, part, present, earlier);
  if (o.op == Op::kAdd && present) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", ClipValue(o.key), " is already set",
                                                   at, "; use ", ClipValue(o.body),
                                                   " to change it"));
  }
  if (o.op == Op::kRemove) {
    if (!present) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", ClipValue(o.key), " is not set; nothing to remove"));
    }
    if (o.has_value && !SameValue(current[part], o.value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", ClipValue(o.key), " is ", ClipValue(ValueText(current[part])),
                       at, ", not ", ClipValue(o.text), "; nothing removed"));
    }
    current.remove(part);
    return absl::OkStatus();
  }
  current[part] = o.value;
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyYamlOverride(YAML::Node root, const std::string& assignment,
                               const std::string& where,
                               const std::map<std::string, std::string>& earlier,
                               std::string* set_key) {
  set_key->clear();
  absl::StatusOr<Override> parsed = ParseOverride(assignment, where);
  if (!parsed.ok()) return parsed.status();
  const Override& o = *parsed;
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the file's top level is not a mapping"));
  }
  YAML::Node current;
  current.reset(root);
  std::string walked;
  size_t i = 0;
  while (true) {
    const size_t end = KeyEnd(current, o.parts, i);
    const std::string part = absl::StrJoin(o.parts.begin() + i, o.parts.begin() + end, ".");
    if (end == o.parts.size()) {
      if (absl::Status applied = ApplyAtLeaf(o, current, part, where, earlier); !applied.ok()) {
        return applied;
      }
      if (o.op != Op::kRemove) *set_key = o.key;
      return absl::OkStatus();
    }
    const bool present = HasScalarKey(current, part);
    walked = walked.empty() ? part : walked + "." + part;
    if (o.op == Op::kRemove && (!present || !current[part].IsMap())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", ClipValue(o.key), " is not set; nothing to remove"));
    }
    YAML::Node next = current[part];
    if (!present || next.IsNull()) {
      next = YAML::Node(YAML::NodeType::Map);
    } else if (!next.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", walked, " (line ", next.Mark().line + 1, ") is not a mapping"));
    }
    current.reset(next);
    i = end;
  }
}

}  // namespace tunefleet
