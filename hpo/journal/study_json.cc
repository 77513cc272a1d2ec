#include "hpo/journal/study_json.h"

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/py_json.h"
#include "hpo/journal/trial_user_attrs.h"

namespace tunefleet {
namespace hpo {
namespace {

// The param as Optuna holds it in external form: an int for IntDistribution and integer
// choices, the label for string choices.
std::string ParamJson(double value, const Distribution* d) {
  if (d != nullptr && (d->kind == Distribution::Kind::kInt ||
                       (d->kind == Distribution::Kind::kCategorical && d->integer_choices))) {
    return std::to_string(static_cast<int64_t>(value));
  }
  if (d != nullptr && d->kind == Distribution::Kind::kCategorical && !d->labels.empty()) {
    return JsonString(d->ValueText(value));
  }
  return JsonFloat(value);
}

std::string OptionalString(const std::string& s) { return s.empty() ? "null" : JsonString(s); }

std::string TrialJson(const Trial& t, const SearchSpace& dists) {
  std::vector<std::string> params, distributions, intermediate, user, system;
  for (const auto& [name, v] : t.params) {
    auto d = dists.find(name);
    params.push_back(absl::StrCat(JsonString(name), ": ",
                                  ParamJson(v, d == dists.end() ? nullptr : &d->second)));
    if (d != dists.end()) {
      distributions.push_back(
          absl::StrCat(JsonString(name), ": ", JsonString(d->second.ToOptunaJson())));
    }
  }
  for (const auto& [step, v] : t.intermediate_values) {
    intermediate.push_back(absl::StrCat("\"", step, "\": ", JsonFloat(v)));
  }
  for (const TrialUserAttr& attr : TrialUserAttrs()) {
    if (HasUserAttr(attr, t)) {
      user.push_back(absl::StrCat(JsonString(attr.name), ": ", UserAttrValue(attr, t)));
    }
  }
  for (const auto& [name, v] : t.system_attrs) {
    system.push_back(absl::StrCat(JsonString(name), ": ", JsonFloat(v)));
  }
  if (t.failed_trial) {
    system.push_back(absl::StrCat("\"failed_trial\": ", *t.failed_trial));
    system.push_back(
        absl::StrCat("\"retry_history\": [", absl::StrJoin(t.retry_history, ", "), "]"));
  }
  return absl::StrCat(
      "{\"number\": ", t.number, ", \"state\": \"", TrialStateName(t.state), "\", \"params\": {",
      absl::StrJoin(params, ", "), "}, \"distributions\": {", absl::StrJoin(distributions, ", "),
      "}, \"value\": ", t.value ? JsonFloat(*t.value) : "null", ", \"intermediate_values\": {",
      absl::StrJoin(intermediate, ", "), "}, \"user_attrs\": {", absl::StrJoin(user, ", "),
      "}, \"system_attrs\": {", absl::StrJoin(system, ", "),
      "}, \"datetime_start\": ", OptionalString(t.datetime_start),
      ", \"datetime_complete\": ", OptionalString(t.datetime_complete), "}");
}

std::string View(const std::string& name, bool maximize,
                 const std::map<std::string, std::string>& study_user_attrs,
                 const std::vector<Trial>& trials,
                 const std::function<const SearchSpace&(size_t)>& distributions_of) {
  std::vector<std::string> rows;
  for (size_t i = 0; i < trials.size(); ++i)
    rows.push_back(TrialJson(trials[i], distributions_of(i)));
  std::vector<std::string> attrs;
  for (const auto& [key, raw] : study_user_attrs) {
    attrs.push_back(absl::StrCat(JsonString(key), ": ", raw));
  }
  return absl::StrCat("{\"study_name\": ", JsonString(name), ", \"direction\": \"",
                      maximize ? "MAXIMIZE" : "MINIMIZE", "\", \"user_attrs\": {",
                      absl::StrJoin(attrs, ", "), "}, \"trials\": [\n  ",
                      absl::StrJoin(rows, ",\n  "), "]}\n");
}

}  // namespace

std::string StudyToJson(const Study& study, const SearchSpace& space,
                        const std::map<std::string, std::string>& study_user_attrs) {
  return View(study.name, study.maximize, study_user_attrs, study.trials,
              [&](size_t) -> const SearchSpace& { return space; });
}

std::string JournalToJson(const JournalContents& c) {
  static const SearchSpace* const kNone = new SearchSpace();
  return View(c.study_name, c.maximize, c.study_user_attrs, c.study.trials,
              [&](size_t i) -> const SearchSpace& {
                return i < c.distributions.size() ? c.distributions[i] : *kNone;
              });
}

}  // namespace hpo
}  // namespace tunefleet
