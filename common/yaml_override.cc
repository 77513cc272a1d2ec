#include "common/yaml_override.h"

#include <string>
#include <vector>

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

}  // namespace

absl::Status ApplyYamlOverride(YAML::Node root, const std::string& assignment,
                               const std::string& where,
                               const std::map<std::string, std::string>& earlier,
                               std::string* set_key) {
  set_key->clear();
  // Hydra's forms: +key=value adds, ++key=value adds or sets, ~key[=value] removes.
  enum class Op { kSet, kAdd, kRemove } op = Op::kSet;
  size_t skip = 0;
  if (absl::StartsWith(assignment, "++")) {
    skip = 2;
  } else if (absl::StartsWith(assignment, "+")) {
    op = Op::kAdd;
    skip = 1;
  } else if (absl::StartsWith(assignment, "~")) {
    op = Op::kRemove;
    skip = 1;
  }
  const std::string body = assignment.substr(skip);
  const size_t eq = body.find('=');
  if ((eq == std::string::npos && op != Op::kRemove) || eq == 0 || body.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, op == Op::kRemove ? ": expected ~key or ~key=value" : ": expected key=value"));
  }
  const std::string key = body.substr(0, eq);
  const bool has_value = eq != std::string::npos;
  const std::string text = has_value ? body.substr(eq + 1) : "";
  std::vector<std::string> parts = absl::StrSplit(key, '.');
  for (const std::string& part : parts) {
    if (!ValidKeyPart(part)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": '", ClipValue(key), "' is not a dotted key such as train.lr"));
    }
  }
  YAML::Node value;
  if (has_value) {
    if (absl::StripAsciiWhitespace(text).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": empty value"));
    }
    try {
      value = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": cannot parse value: ", e.msg));
    }
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the file's top level is not a mapping"));
  }
  YAML::Node current;
  current.reset(root);
  std::string walked;
  size_t i = 0;
  while (true) {
    // The key at this level: the longest run of parts that the file writes as one key with
    // dots in it (`parameters: {train.weight_decay: ...}`), else the next part alone.
    size_t end = i + 1;
    for (size_t j = parts.size(); j > i + 1; --j) {
      if (HasScalarKey(current, absl::StrJoin(parts.begin() + i, parts.begin() + j, "."))) {
        end = j;
        break;
      }
    }
    const std::string part = absl::StrJoin(parts.begin() + i, parts.begin() + end, ".");
    const bool present = HasScalarKey(current, part);
    if (end == parts.size()) {
      // Where the value came from: an earlier override, or the file's line.
      std::string at;
      for (const auto& [set, shown] : earlier) {
        if (key == set || absl::StartsWith(key, set + ".")) {
          at = absl::StrCat(" (by override '", ClipValue(shown), "')");
        }
      }
      if (at.empty() && present && !current[part].Mark().is_null()) {
        at = absl::StrCat(" (line ", current[part].Mark().line + 1, ")");
      }
      if (op == Op::kAdd && present) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": ", ClipValue(key),
                                                       " is already set", at, "; use ",
                                                       ClipValue(body), " to change it"));
      }
      if (op == Op::kRemove) {
        if (!present) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": ", ClipValue(key), " is not set; nothing to remove"));
        }
        if (has_value && !SameValue(current[part], value)) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": ", ClipValue(key), " is ", ClipValue(ValueText(current[part])),
                           at, ", not ", ClipValue(text), "; nothing removed"));
        }
        current.remove(part);
        return absl::OkStatus();
      }
      current[part] = value;
      break;
    }
    walked = walked.empty() ? part : walked + "." + part;
    if (op == Op::kRemove && (!present || !current[part].IsMap())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", ClipValue(key), " is not set; nothing to remove"));
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
  *set_key = key;
  return absl::OkStatus();
}

}  // namespace tunefleet
