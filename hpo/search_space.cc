#include "hpo/search_space.h"

#include <cmath>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace hpo {
namespace {

// Shortest text that reads back as the same double (as Python's repr does).
std::string Repr(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string ChoiceJson(double v, bool integer) {
  if (integer) return std::to_string(static_cast<long long>(v));
  return Repr(v);
}

}  // namespace

bool Distribution::Contains(double value) const {
  if (kind == Kind::kFloat) return value >= low && value <= high;
  for (double c : choices) {
    if (c == value) return true;
  }
  return false;
}

std::string Distribution::ToOptunaJson() const {
  if (kind == Kind::kFloat) {
    return absl::StrCat("{\"name\": \"FloatDistribution\", \"attributes\": {\"step\": null, "
                        "\"low\": ", Repr(low), ", \"high\": ", Repr(high), ", \"log\": ",
                        log ? "true" : "false", "}}");
  }
  std::vector<std::string> items;
  for (double c : choices) items.push_back(ChoiceJson(c, integer_choices));
  return absl::StrCat("{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [",
                      absl::StrJoin(items, ", "), "]}}");
}

double Distribution::ToInternal(double external) const {
  if (kind == Kind::kFloat) return external;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == external) return static_cast<double>(i);
  }
  return -1;
}

double Distribution::ToExternal(double internal) const {
  if (kind == Kind::kFloat) return internal;
  const auto i = static_cast<size_t>(internal);
  return i < choices.size() ? choices[i] : NAN;
}

std::string Distribution::Describe() const {
  if (kind == Kind::kFloat) {
    return absl::StrCat(log ? "log_uniform" : "uniform", " [", Repr(low), ", ", Repr(high), "]");
  }
  std::vector<std::string> items;
  for (double c : choices) items.push_back(integer_choices ? ChoiceJson(c, true) : Repr(c));
  return absl::StrCat("categorical {", absl::StrJoin(items, ", "), "}");
}

SearchSpace BuildSearchSpace(const SweepConfig& config) {
  SearchSpace space;
  Distribution lr;
  if (config.lr.distribution == "categorical") {
    lr.kind = Distribution::Kind::kCategorical;
    lr.choices = config.lr.values;
  } else {
    lr.kind = Distribution::Kind::kFloat;
    lr.low = config.lr.min;
    lr.high = config.lr.max;
    lr.log = config.lr.distribution == "log_uniform";
  }
  space[kLrParam] = lr;
  Distribution batch;
  batch.kind = Distribution::Kind::kCategorical;
  batch.integer_choices = true;
  for (int64_t b : config.batch_sizes) batch.choices.push_back(static_cast<double>(b));
  space[kBatchParam] = batch;
  return space;
}

}  // namespace hpo
}  // namespace tunefleet
