#include "hpo/journal/journal_decode.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "hpo/journal/trial_user_attrs.h"

namespace tunefleet {
namespace hpo {
namespace journal_internal {

void Fail(std::string message) { throw JournalOpError{std::move(message)}; }

const PyJson& Field(const PyJson& log, const char* key) {
  auto it = log.find(key);
  if (it == log.end()) Fail(absl::StrCat("missing \"", key, "\""));
  return *it;
}

int64_t AsInt(const PyJson& v, const std::string& what) {
  if (!v.is_number_integer())
    Fail(absl::StrCat(what, ": expected an integer, got ", DumpPyJson(v)));
  return v.get<int64_t>();
}

double AsNumber(const PyJson& v, const std::string& what) {
  if (!v.is_number()) Fail(absl::StrCat(what, ": expected a number, got ", DumpPyJson(v)));
  return v.get<double>();
}

const std::string& AsString(const PyJson& v, const std::string& what) {
  if (!v.is_string()) Fail(absl::StrCat(what, ": expected a string, got ", DumpPyJson(v)));
  return v.get_ref<const std::string&>();
}

// A one-entry {"key": value} (Optuna asserts len == 1).
std::pair<std::string, const PyJson*> SingleAttr(const PyJson& log, const char* field) {
  const PyJson& attr = Field(log, field);
  if (!attr.is_object() || attr.size() != 1) {
    Fail(absl::StrCat("\"", field, "\": expected an object with one key, got ", DumpPyJson(attr)));
  }
  return {attr.begin().key(), &attr.begin().value()};
}

TrialState AsState(const PyJson& v) {
  const int64_t s = AsInt(v, "state");
  if (s < 0 || s > 4) Fail(absl::StrCat("state: no TrialState ", s));
  return static_cast<TrialState>(s);
}

ParsedDistribution ParseDistribution(const PyJson& text_json) {
  const std::string& text = AsString(text_json, "distribution");
  absl::StatusOr<PyJson> parsed = ParsePyJson(text);
  if (!parsed.ok()) Fail(absl::StrCat("distribution: ", parsed.status().message()));
  PyJson& j = *parsed;
  if (!j.is_object() || !j.contains("name") || !j.contains("attributes") ||
      !j["name"].is_string() || !j["attributes"].is_object()) {
    Fail(absl::StrCat("distribution: expected {\"name\": ..., \"attributes\": {...}}, got ", text));
  }
  ParsedDistribution out;
  out.name = j["name"].get<std::string>();
  const PyJson& attrs = j["attributes"];
  const auto attr = [&](const char* key) -> const PyJson& {
    auto it = attrs.find(key);
    if (it == attrs.end()) Fail(absl::StrCat("distribution ", out.name, ": missing \"", key, "\""));
    return *it;
  };
  if (out.name == "FloatDistribution" || out.name == "UniformDistribution" ||
      out.name == "LogUniformDistribution") {
    out.dist.kind = Distribution::Kind::kFloat;
    out.dist.low = AsNumber(attr("low"), "distribution low");
    out.dist.high = AsNumber(attr("high"), "distribution high");
    out.dist.log = out.name == "LogUniformDistribution";
    if (out.name == "FloatDistribution") {
      const PyJson& log = attr("log");
      if (!log.is_boolean()) Fail("distribution log: expected true or false");
      out.dist.log = log.get<bool>();
      auto step = attrs.find("step");
      if (step != attrs.end() && !step->is_null()) {
        Fail("distribution: a stepped FloatDistribution is not supported");
      }
    }
    if (!(out.dist.low <= out.dist.high)) Fail("distribution: low > high");
    if (out.dist.log && !(out.dist.low > 0)) Fail("distribution: log with low <= 0");
  } else if (out.name == "IntDistribution") {
    out.dist.kind = Distribution::Kind::kInt;
    const PyJson& low = attr("low");
    const PyJson& high = attr("high");
    const PyJson& log = attr("log");
    if (!low.is_number_integer() || !high.is_number_integer()) {
      Fail("distribution: IntDistribution low and high must be integers");
    }
    if (!log.is_boolean()) Fail("distribution log: expected true or false");
    const PyJson& step = attr("step");
    if (!step.is_number_integer() || step.get<int64_t>() != 1) {
      Fail("distribution: an IntDistribution with a step other than 1 is not supported");
    }
    out.dist.low = static_cast<double>(low.get<int64_t>());
    out.dist.high = static_cast<double>(high.get<int64_t>());
    out.dist.log = log.get<bool>();
    if (!(out.dist.low <= out.dist.high)) Fail("distribution: low > high");
  } else if (out.name == "CategoricalDistribution") {
    const PyJson& choices = attr("choices");
    if (!choices.is_array() || choices.empty()) {
      Fail("distribution choices: expected a non-empty list");
    }
    out.dist.kind = Distribution::Kind::kCategorical;
    if (choices[0].is_string()) {
      // String choices: held by their index (hpo/search_space.h).
      for (const PyJson& c : choices) {
        if (!c.is_string()) {
          Fail("distribution choices: mixed strings and numbers are not supported");
        }
        out.dist.choices.push_back(static_cast<double>(out.dist.labels.size()));
        out.dist.labels.push_back(c.get<std::string>());
      }
    } else {
      out.dist.integer_choices = true;
      for (const PyJson& c : choices) {
        out.dist.choices.push_back(AsNumber(c, "distribution choice"));
        if (!c.is_number_integer()) out.dist.integer_choices = false;
      }
    }
  } else {
    Fail(absl::StrCat("distribution: ", out.name, " is not supported"));
  }
  return out;
}

// check_distribution_compatibility.
bool Compatible(const ParsedDistribution& old_d, const ParsedDistribution& new_d) {
  if (old_d.name != new_d.name) return false;
  if (old_d.dist.kind != Distribution::Kind::kCategorical) return old_d.dist.log == new_d.dist.log;
  return old_d.dist.choices == new_d.dist.choices && old_d.dist.labels == new_d.dist.labels;
}

// to_external_repr.
double ToExternal(const ParsedDistribution& d, const PyJson& internal_json) {
  const double internal = AsNumber(internal_json, "param_value_internal");
  if (d.dist.kind != Distribution::Kind::kCategorical) return internal;
  if (!std::isfinite(internal)) Fail("param_value_internal: not a choice index");
  const double index = std::trunc(internal);  // Python's int()
  if (index < 0 || index >= static_cast<double>(d.dist.choices.size())) {
    Fail(absl::StrCat("param_value_internal: choice index ", JsonFloat(internal), " out of range"));
  }
  return d.dist.choices[static_cast<size_t>(index)];
}

void ApplyUserAttr(const std::string& key, const PyJson& v, Trial* t) {
  const TrialUserAttr* attr = FindTrialUserAttr(key);
  if (attr == nullptr) return;  // other user attrs have no place in Trial
  if (absl::Status read = ReadUserAttr(*attr, v, t); !read.ok()) Fail(std::string(read.message()));
}

void ApplySystemAttr(const std::string& key, const PyJson& v, Trial* t) {
  const std::string what = absl::StrCat("system attr \"", key, "\"");
  if (key == "failed_trial") {
    t->failed_trial = AsInt(v, what);
  } else if (key == "retry_history") {
    if (!v.is_array()) Fail(absl::StrCat(what, ": expected a list"));
    t->retry_history.clear();
    for (const PyJson& e : v) t->retry_history.push_back(AsInt(e, what));
  } else if (v.is_number()) {
    t->system_attrs[key] = v.get<double>();
  } else {
    t->system_attrs.erase(key);  // non-numeric system attrs have no place in Trial
  }
}

std::optional<double> SingleValue(const PyJson& values) {
  if (values.is_null()) return std::nullopt;
  if (!values.is_array() || values.size() != 1) {
    Fail(absl::StrCat("values: expected null or one value (single-objective), got ",
                      DumpPyJson(values)));
  }
  return AsNumber(values[0], "values");
}

std::string DatetimeField(const PyJson& v, const char* what) {
  if (v.is_null()) return "";
  return AsString(v, what);
}

}  // namespace journal_internal

absl::Status CheckUserAttr(const std::string& key, const PyJson& value) {
  try {
    Trial scratch;
    journal_internal::ApplyUserAttr(key, value, &scratch);
  } catch (const journal_internal::JournalOpError& e) {
    return absl::InvalidArgumentError(e.message);
  }
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
