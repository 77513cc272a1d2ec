#include "hpo/search_space.h"

#include <cmath>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/number_text.h"

namespace tunefleet {
namespace hpo {
namespace {

std::string Repr(double v) { return PythonRepr(v); }

// Python's json.dumps of a str (ASCII; other bytes as they are, which the YAML gave as UTF-8).
std::string JsonQuote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string ChoiceJson(double v, bool integer) {
  if (integer) return std::to_string(static_cast<long long>(v));
  return Repr(v);
}

}  // namespace

bool Distribution::Contains(double value) const {
  if (kind == Kind::kFloat) return value >= low && value <= high;
  if (kind == Kind::kInt) return value >= low && value <= high && value == std::floor(value);
  for (double c : choices) {
    if (c == value) return true;
  }
  return false;
}

std::string Distribution::ToOptunaJson() const {
  if (kind == Kind::kInt) {
    return absl::StrCat(
        "{\"name\": \"IntDistribution\", \"attributes\": {\"log\": ", log ? "true" : "false",
        ", \"step\": 1, \"low\": ", static_cast<int64_t>(low),
        ", \"high\": ", static_cast<int64_t>(high), "}}");
  }
  if (kind == Kind::kFloat) {
    return absl::StrCat(
        "{\"name\": \"FloatDistribution\", \"attributes\": {\"step\": null, "
        "\"low\": ",
        Repr(low), ", \"high\": ", Repr(high), ", \"log\": ", log ? "true" : "false", "}}");
  }
  std::vector<std::string> items;
  if (!labels.empty()) {
    for (const std::string& l : labels) items.push_back(JsonQuote(l));
  } else {
    for (double c : choices) items.push_back(ChoiceJson(c, integer_choices));
  }
  return absl::StrCat("{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [",
                      absl::StrJoin(items, ", "), "]}}");
}

double Distribution::ToInternal(double external) const {
  if (kind != Kind::kCategorical) return external;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == external) return static_cast<double>(i);
  }
  return -1;
}

double Distribution::ToExternal(double internal) const {
  if (kind != Kind::kCategorical) return internal;
  const auto i = static_cast<size_t>(internal);
  return i < choices.size() ? choices[i] : NAN;
}

std::string Distribution::Describe() const {
  if (kind == Kind::kFloat) {
    return absl::StrCat(log ? "log_uniform" : "uniform", " [", Repr(low), ", ", Repr(high), "]");
  }
  if (kind == Kind::kInt) {
    return absl::StrCat("int [", static_cast<int64_t>(low), ", ", static_cast<int64_t>(high), "]");
  }
  std::vector<std::string> items;
  for (double c : choices) items.push_back(ValueText(c));
  return absl::StrCat("categorical {", absl::StrJoin(items, ", "), "}");
}

std::string Distribution::ValueText(double value) const {
  if (kind == Kind::kInt || (kind == Kind::kCategorical && integer_choices)) {
    return std::to_string(static_cast<long long>(value));
  }
  if (kind == Kind::kCategorical && !labels.empty()) {
    const auto i = static_cast<size_t>(value);
    return value >= 0 && i < labels.size() ? labels[i] : "?";
  }
  return Repr(value);
}

Distribution ToDistribution(const ParamSpec& spec) {
  Distribution d;
  if (spec.distribution == "categorical") {
    d.kind = Distribution::Kind::kCategorical;
    if (!spec.labels.empty()) {
      d.labels = spec.labels;
      for (size_t i = 0; i < spec.labels.size(); ++i) d.choices.push_back(static_cast<double>(i));
    } else {
      d.choices = spec.values;
      // Whole numbers are written as integers (train.epochs: [1, 2] must reach the trainer so).
      d.integer_choices = true;
      for (double v : spec.values) {
        d.integer_choices = d.integer_choices && v == std::floor(v) && std::abs(v) < 1e15;
      }
    }
    return d;
  }
  d.kind = spec.distribution == "int" ? Distribution::Kind::kInt : Distribution::Kind::kFloat;
  d.low = spec.min;
  d.high = spec.max;
  d.log = spec.distribution == "log_uniform";
  return d;
}

SearchSpace BuildSearchSpace(const SearchSettings& config) {
  SearchSpace space;
  Distribution lr = ToDistribution(config.lr);
  lr.integer_choices = false;  // learning rates are floats, 1.0 included
  space[kLrParam] = lr;
  for (const ParamSpec& p : config.params) space[p.name] = ToDistribution(p);
  Distribution batch;
  batch.kind = Distribution::Kind::kCategorical;
  batch.integer_choices = true;
  for (int64_t b : config.batch_sizes) batch.choices.push_back(static_cast<double>(b));
  space[kBatchParam] = batch;
  return space;
}

}  // namespace hpo
}  // namespace tunefleet
