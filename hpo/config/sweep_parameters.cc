#include "hpo/config/sweep_parameters.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clip.h"
#include "common/name_chars.h"
#include "common/number_text.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr const char* kSpecKeys[] = {"distribution", "min", "max", "values"};

bool IsSpec(const ConfigMap& m) {
  for (const char* key : kSpecKeys) {
    if (m.Has(key)) return true;
  }
  return false;
}

// The trainer key a parameter name stands for: itself when it is a trainer key, else the one
// trainer key whose last part it is; the error says why not (no location).
absl::StatusOr<std::string> ResolveTrainerKey(const std::string& name,
                                              const std::vector<std::string>& keys) {
  if (std::find(keys.begin(), keys.end(), name) != keys.end()) return name;
  std::vector<std::string> matches;
  if (name.find('.') == std::string::npos) {
    for (const std::string& key : keys) {
      if (absl::EndsWith(key, "." + name)) matches.push_back(key);
    }
  }
  if (matches.size() == 1) return matches[0];
  if (matches.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "names several trainer keys (", absl::StrJoin(matches, ", "), "): write the one you mean"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("is not a trainer key (the trainer reads ", absl::StrJoin(keys, ", "), ")"));
}

absl::Status CheckReserved(const ConfigMap& m, const std::string& entry, const std::string& key) {
  if (key == "output.dir") {
    return m.Error(entry, "hpo gives each trial its own output.dir; it cannot be searched");
  }
  if (key == "train.devices") {
    return m.Error(entry,
                   "a trial's ranks come from resources.gpus_per_trial (the agents ignore "
                   "train.devices); it cannot be searched");
  }
  if (absl::StartsWith(key, "train.eval_every_")) {
    return m.Error(entry,
                   "hpo sets the evaluation cadence of every trial (trainer.evals_per_epoch); "
                   "it cannot be searched");
  }
  return absl::OkStatus();
}

// The distribution of `m`, W&B's spellings mapped to ours; "categorical" when `values` is given.
absl::Status ReadDistribution(const ConfigMap& m, ParamSpec* p) {
  std::string d;
  if (m.Has("values")) {
    if (m.Has("min") || m.Has("max")) {
      return m.Error("values", "give either values or distribution/min/max, not both");
    }
    d = "categorical";
    RETURN_IF_ERROR(m.GetEnum("distribution", {"categorical"}, &d));
  } else {
    RETURN_IF_ERROR(m.GetEnum(
        "distribution", {"log_uniform", "uniform", "int", "log_uniform_values", "int_uniform"}, &d,
        /*required=*/true));
  }
  if (d == "log_uniform_values") d = "log_uniform";
  if (d == "int_uniform") d = "int";
  p->distribution = d;
  p->line = m.Line("");
  return absl::OkStatus();
}

absl::Status ReadRange(const ConfigMap& m, ParamSpec* p) {
  RETURN_IF_ERROR(m.Get("min", &p->min));
  RETURN_IF_ERROR(m.Get("max", &p->max));
  if (p->distribution == "int") {
    int64_t lo = 0, hi = 0;
    RETURN_IF_ERROR(m.Get("min", &lo));
    RETURN_IF_ERROR(m.Get("max", &hi));
    if (lo > hi) {
      return m.Error("max", absl::StrCat("must be >= min (", lo, "), got ", hi));
    }
    return absl::OkStatus();
  }
  if (p->distribution == "log_uniform" && p->min <= 0) {
    return m.Error("min", absl::StrCat("must be > 0 for log_uniform, got ", p->min));
  }
  if (p->min >= p->max) {
    return m.Error("max", absl::StrCat("must be greater than min (", p->min, "), got ", p->max));
  }
  return absl::OkStatus();
}

absl::Status ReadValues(const ConfigMap& m, ParamSpec* p) {
  if (!m.Get("values", &p->values).ok()) {
    p->values.clear();
    RETURN_IF_ERROR(m.Get("values", &p->labels));
  }
  const size_t n = p->values.size() + p->labels.size();
  if (n == 0) return m.Error("values", "must list at least one value");
  std::set<std::string> seen;
  for (size_t i = 0; i < n; ++i) {
    const std::string text = p->labels.empty() ? ShortestText(p->values[i]) : p->labels[i];
    if (!seen.insert(text).second) {
      return m.Error("values", absl::StrCat(ClipValue(text), " is listed twice"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseLr(const ConfigMap& m, ParamSpec* lr) {
  RETURN_IF_ERROR(m.AllowOnly({"distribution", "min", "max", "values"}));
  lr->name = "lr";
  if (m.Has("values")) {
    if (m.Has("distribution") || m.Has("min") || m.Has("max")) {
      return m.Error("values", "give either values or distribution/min/max, not both");
    }
    lr->distribution = "categorical";
    lr->line = m.Line("");
    RETURN_IF_ERROR(m.Get("values", &lr->values));
    if (lr->values.empty()) return m.Error("values", "must list at least one learning rate");
    for (double v : lr->values) {
      if (v <= 0) return m.Error("values", absl::StrCat("learning rates must be > 0, got ", v));
    }
    std::sort(lr->values.begin(), lr->values.end());
    lr->values.erase(std::unique(lr->values.begin(), lr->values.end()), lr->values.end());
    lr->min = lr->values.front();
    lr->max = lr->values.back();
    return absl::OkStatus();
  }
  std::string d;
  RETURN_IF_ERROR(m.GetEnum("distribution", {"log_uniform", "uniform", "log_uniform_values"}, &d,
                            /*required=*/true));
  RETURN_IF_ERROR(ReadDistribution(m, lr));
  return ReadRange(m, lr);
}

absl::Status ParseBatch(const ConfigMap& m, std::vector<int64_t>* batch_sizes) {
  RETURN_IF_ERROR(m.AllowOnly({"values"}));
  RETURN_IF_ERROR(m.Get("values", batch_sizes));
  if (batch_sizes->empty()) return m.Error("values", "must list at least one batch size");
  std::set<int64_t> seen;
  for (int64_t b : *batch_sizes) {
    if (b < 1) return m.Error("values", absl::StrCat("batch sizes must be positive, got ", b));
    if (b > kMaxBatchSize) {
      return m.Error("values", absl::StrCat("batch sizes must be at most ", kMaxBatchSize,
                                            " (2^20), got ", b));
    }
    if (!seen.insert(b).second) {
      return m.Error("values", absl::StrCat("batch size ", b, " is listed twice"));
    }
  }
  std::sort(batch_sizes->begin(), batch_sizes->end());
  return absl::OkStatus();
}

absl::Status ParseOther(const ConfigMap& m, const std::string& key, ParamSpec* p) {
  RETURN_IF_ERROR(m.AllowOnly({"distribution", "min", "max", "values"}));
  p->name = key;
  RETURN_IF_ERROR(ReadDistribution(m, p));
  if (p->distribution == "categorical") return ReadValues(m, p);
  return ReadRange(m, p);
}

struct Entry {
  std::string name;  // dotted, from the nesting
  ConfigMap map;
  std::string at;  // the key of `map` in its parent, for messages
  ConfigMap parent;
};

// Every spec under `m`, namespaces flattened ("train" + "weight_decay" -> "train.weight_decay").
absl::Status Collect(const ConfigMap& m, const std::string& prefix, std::vector<Entry>* out) {
  RETURN_IF_ERROR(m.AllowOnly(m.Keys()));  // duplicate keys
  for (const std::string& key : m.Keys()) {
    if (!m.IsMap(key)) {
      return m.Error(key,
                     "expected a mapping: {distribution: ..., min: ..., max: ...} or "
                     "{values: [...]}");
    }
    ASSIGN_OR_RETURN(ConfigMap child, m.GetMap(key));
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (IsSpec(child)) {
      out->push_back(Entry{name, child, key, m});
    } else {
      RETURN_IF_ERROR(Collect(child, name, out));
    }
  }
  return absl::OkStatus();
}

// How many values a parameter takes: a list's length, 1 for int min == max, 0 for a range.
int64_t ValueCount(const ParamSpec& p) {
  if (p.distribution == "categorical") {
    return static_cast<int64_t>(p.labels.empty() ? p.values.size() : p.labels.size());
  }
  return p.distribution == "int" && p.min == p.max ? 1 : 0;
}

// The sample points CheckParametersWithTrainer tries.
std::vector<double> Probes(const ParamSpec& p) {
  if (p.distribution == "categorical") {
    if (!p.labels.empty()) {
      std::vector<double> out;
      for (size_t i = 0; i < p.labels.size(); ++i) out.push_back(static_cast<double>(i));
      return out;
    }
    return p.values;
  }
  if (p.distribution == "int") return {p.min, p.max};
  // 0.37 of the way: not an integer unless the range is, so an integer key fails on it.
  const double inside = p.distribution == "log_uniform"
                            ? std::exp(std::log(p.min) + 0.37 * (std::log(p.max) - std::log(p.min)))
                            : p.min + 0.37 * (p.max - p.min);
  return {p.min, inside, p.max};
}

}  // namespace

absl::StatusOr<std::string> ParameterName(const std::string& name, ParamNames names) {
  if (name == "lr" || name == "train.lr") return std::string("lr");
  if (name == "batch_size" || name == "train.batch_size") return std::string("batch_size");
  if (names.kind == ParamNames::kTrainerKeys) {
    if (!names.trainer_keys) return name;  // resolved where the trainer is asked
    ASSIGN_OR_RETURN(std::vector<std::string> keys, names.trainer_keys());
    return ResolveTrainerKey(name, keys);
  }
  for (const char* given : {"lr_base", "lr_effective", "trial", "trial_dir"}) {
    if (name == given) {
      return absl::InvalidArgumentError("is a value hpo gives every trial; it cannot be searched");
    }
  }
  if (name.empty() || name.size() > 128 || !AllAlnumOr(name, "_.-")) {
    return absl::InvalidArgumentError(
        "is not a parameter name (1-128 letters, digits, '_', '.' or '-')");
  }
  return name;
}

absl::Status ParseParameters(const ConfigMap& m, ParamSpec* lr, std::vector<int64_t>* batch_sizes,
                             std::vector<ParamSpec>* others, std::vector<ParameterEntry>* listed,
                             ParamNames names) {
  std::vector<Entry> entries;
  RETURN_IF_ERROR(Collect(m, "", &entries));
  if (names.kind == ParamNames::kTrainerKeys && names.trainer_keys) {
    for (const Entry& e : entries) {
      if (e.name == "lr" || e.name == "train.lr" || e.name == "batch_size" ||
          e.name == "train.batch_size") {
        continue;
      }
      // A trainer key is named: the trainer's refusal of its config is the error, as it is.
      RETURN_IF_ERROR(names.trainer_keys().status());
      break;
    }
  }
  bool have_lr = false, have_batch = false;
  std::set<std::string> seen;
  for (const Entry& e : entries) {
    if (e.name == "lr" || e.name == "train.lr") {
      if (have_lr) return e.parent.Error(e.at, "lr is given twice (lr and train.lr)");
      have_lr = true;
      RETURN_IF_ERROR(ParseLr(e.map, lr));
      if (listed != nullptr) {
        listed->push_back(ParameterEntry{"lr", e.name, ValueCount(*lr), e.parent, e.at});
      }
      continue;
    }
    if (e.name == "batch_size" || e.name == "train.batch_size") {
      if (have_batch) {
        return e.parent.Error(e.at, "batch_size is given twice (batch_size and train.batch_size)");
      }
      have_batch = true;
      RETURN_IF_ERROR(ParseBatch(e.map, batch_sizes));
      if (listed != nullptr) {
        listed->push_back(ParameterEntry{
            "batch_size", e.name, static_cast<int64_t>(batch_sizes->size()), e.parent, e.at});
      }
      continue;
    }
    absl::StatusOr<std::string> named = ParameterName(e.name, names);
    if (!named.ok()) return e.parent.Error(e.at, std::string(named.status().message()));
    const std::string key = *named;
    if (names.kind == ParamNames::kTrainerKeys) RETURN_IF_ERROR(CheckReserved(e.parent, e.at, key));
    if (key == "train.lr" || key == "train.batch_size") {
      return e.parent.Error(e.at, absl::StrCat("write it as ", key.substr(6)));
    }
    if (!seen.insert(key).second) {
      return e.parent.Error(e.at, absl::StrCat(key, " is given twice"));
    }
    ParamSpec p;
    RETURN_IF_ERROR(ParseOther(e.map, key, &p));
    if (listed != nullptr) {
      listed->push_back(ParameterEntry{key, e.name, ValueCount(p), e.parent, e.at});
    }
    others->push_back(std::move(p));
  }
  if (!have_lr) return m.Error("", "missing required key 'lr'");
  if (!have_batch) return m.Error("", "missing required key 'batch_size'");
  return absl::OkStatus();
}

std::vector<std::string> TrainerChecks(const std::vector<ParamSpec>& others,
                                       const std::vector<int64_t>& batch_sizes) {
  std::vector<std::string> checks;
  for (const ParamSpec& p : others) {
    for (double probe : Probes(p)) checks.push_back(p.name + "=" + ParamValueText(p, probe));
  }
  for (int64_t batch : batch_sizes) checks.push_back(absl::StrCat("train.batch_size=", batch));
  return checks;
}

absl::Status CheckParametersWithTrainer(
    const std::vector<ParamSpec>& others,
    const std::vector<std::pair<std::string, std::string>>& verdicts,
    const std::string& sweep_source) {
  size_t next = 0;
  for (const ParamSpec& p : others) {
    for (double probe : Probes(p)) {
      if (next >= verdicts.size()) {
        return absl::InternalError(absl::StrCat("the trainer judged ", verdicts.size(),
                                                " values, fewer than the sweep searches"));
      }
      std::string why = verdicts[next++].second;
      if (why.empty()) continue;
      const size_t quote = why.find("': ");  // "FILE: override 'k=v': MESSAGE"
      if (quote != std::string::npos) why = why.substr(quote + 3);
      std::string hint;
      if (p.distribution != "int" && p.distribution != "categorical" &&
          absl::StrContains(why, "expected an integer")) {
        hint = " (use distribution: int)";
      }
      // A parameter that an override made has no line.
      return absl::InvalidArgumentError(
          absl::StrCat(sweep_source, p.line > 0 ? absl::StrCat(":", p.line) : "", ": parameters.",
                       p.name, ": the trainer refuses ", p.name, "=",
                       ClipValue(ParamValueText(p, probe)), ": ", why, hint));
    }
  }
  return absl::OkStatus();
}

std::string ParamValueText(const ParamSpec& p, double value) {
  if (!p.labels.empty()) {
    const auto i = static_cast<size_t>(value);
    return i < p.labels.size() ? p.labels[i] : "?";
  }
  if (p.distribution == "int") return std::to_string(static_cast<long long>(std::llround(value)));
  return ShortestText(value);
}

}  // namespace hpo
}  // namespace tunefleet
