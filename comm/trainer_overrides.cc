#include "comm/trainer_overrides.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/number_text.h"
#include "yaml-cpp/yaml.h"

namespace tunefleet {
namespace comm {
namespace {

// YAML 1.2's core schema, as the trainer's YAML reads plain scalars.
bool IsBoolWord(const std::string& s, bool* value) {
  if (s == "true" || s == "True" || s == "TRUE") return *value = true, true;
  if (s == "false" || s == "False" || s == "FALSE") return *value = false, true;
  return false;
}

bool IsInteger(const std::string& s, int64_t* value) {
  static const std::regex kInt("[-+]?[0-9]+");
  if (!std::regex_match(s, kInt)) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return false;
  *value = v;
  return true;
}

bool IsFloat(const std::string& s, double* value) {
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF") {
    return *value = HUGE_VAL, true;
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return *value = -HUGE_VAL, true;
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return *value = std::nan(""), true;
  if (!std::regex_match(s, kFloat)) return false;
  *value = std::strtod(s.c_str(), nullptr);
  return true;
}

bool IsNullWord(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::string DoubleText(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  return PythonRepr(v);
}

// Double-quoted YAML (a superset of JSON's strings).
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      out += absl::StrFormat("\\x%02x", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Whether YAML reads `s`, written plain, back as the string `s`.
bool PlainIsSafe(const std::string& s) {
  if (s.empty() || IsNullWord(s)) return false;
  bool b;
  int64_t i;
  double d;
  if (IsBoolWord(s, &b) || IsInteger(s, &i) || IsFloat(s, &d)) return false;
  try {
    const YAML::Node node = YAML::Load(s);
    return node.IsScalar() && node.Tag() == "?" && node.Scalar() == s;
  } catch (const YAML::Exception&) {
    return false;
  }
}

}  // namespace

std::string OverrideArg(const TrainerOverride& o) {
  std::string value;
  switch (o.value_case()) {
    case TrainerOverride::kDoubleValue:
      value = DoubleText(o.double_value());
      break;
    case TrainerOverride::kIntValue:
      value = std::to_string(o.int_value());
      break;
    case TrainerOverride::kBoolValue:
      value = o.bool_value() ? "true" : "false";
      break;
    case TrainerOverride::kStringValue:
      value = PlainIsSafe(o.string_value()) ? o.string_value() : Quoted(o.string_value());
      break;
    case TrainerOverride::kYamlValue:
      value = o.yaml_value();
      break;
    case TrainerOverride::VALUE_NOT_SET:
      break;
  }
  return absl::StrCat(o.key(), "=", value);
}

absl::StatusOr<TrainerOverride> ParseOverrideArg(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", arg, "': expected key=value"));
  }
  TrainerOverride o;
  o.set_key(arg.substr(0, eq));
  const std::string text = arg.substr(eq + 1);
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("'", arg, "': not YAML: ", e.msg));
  }
  if (!node.IsScalar()) {
    if (!node.IsNull() || !text.empty()) o.set_yaml_value(text);  // a list, mapping or null
    return o;
  }
  const std::string& s = node.Scalar();
  bool b;
  int64_t i;
  double d;
  if (node.Tag() != "?") {
    o.set_string_value(s);  // quoted
  } else if (IsBoolWord(s, &b)) {
    o.set_bool_value(b);
  } else if (IsInteger(s, &i)) {
    o.set_int_value(i);
  } else if (IsFloat(s, &d)) {
    o.set_double_value(d);
  } else {
    o.set_string_value(s);
  }
  return o;
}

std::vector<std::string> TrainerArgv(const TrialSpec& spec) {
  std::vector<std::string> argv(spec.argv().begin(), spec.argv().end());
  for (const TrainerOverride& o : spec.overrides()) argv.push_back(OverrideArg(o));
  return argv;
}

}  // namespace comm
}  // namespace tunefleet
