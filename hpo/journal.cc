#include "hpo/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clip.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace hpo {
namespace {

// Key order is kept, as Python's dicts keep it.
using Json = nlohmann::ordered_json;

// Optuna 3.1's JournalOperation.
enum OpCode {
  kCreateStudy = 0,
  kDeleteStudy = 1,
  kSetStudyUserAttr = 2,
  kSetStudySystemAttr = 3,
  kCreateTrial = 4,
  kSetTrialParam = 5,
  kSetTrialStateValues = 6,
  kSetTrialIntermediateValue = 7,
  kSetTrialUserAttr = 8,
  kSetTrialSystemAttr = 9,
};

// Optuna's StudyDirection.
constexpr int kMinimize = 1;
constexpr int kMaximize = 2;

std::string ErrnoText(int err) { return std::strerror(err); }

// ---------------------------------------------------------------------------------------------
// JSON as Python's json module reads and writes it.

// nlohmann::json rejects Python's non-finite tokens, so they are swapped (outside strings) for
// string sentinels before parsing and swapped back after. The sentinels start with a NUL
// character, which Python's json.dumps always escapes, so no journal string we write equals one.
const std::string kNanSentinel("\0tunefleet:NaN", 14);
const std::string kInfSentinel("\0tunefleet:Infinity", 19);
const std::string kNegInfSentinel("\0tunefleet:-Infinity", 20);

std::string ReplaceNonFiniteTokens(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 32);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (text.substr(i, 3) == "NaN") {
      out += "\"\\u0000tunefleet:NaN\"";
      i += 2;
    } else if (text.substr(i, 8) == "Infinity") {
      out += "\"\\u0000tunefleet:Infinity\"";
      i += 7;
    } else if (text.substr(i, 9) == "-Infinity") {
      out += "\"\\u0000tunefleet:-Infinity\"";
      i += 8;
    } else {
      out += c;
    }
  }
  return out;
}

// Turns sentinels back into doubles; false when one is used as an object key.
bool RestoreNonFinite(Json* j) {
  if (j->is_string()) {
    const std::string& s = j->get_ref<const std::string&>();
    if (s.empty() || s[0] != '\0') return true;
    if (s == kNanSentinel)
      *j = std::numeric_limits<double>::quiet_NaN();
    else if (s == kInfSentinel)
      *j = std::numeric_limits<double>::infinity();
    else if (s == kNegInfSentinel)
      *j = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (j->is_array()) {
    for (Json& e : *j) {
      if (!RestoreNonFinite(&e)) return false;
    }
  } else if (j->is_object()) {
    for (auto it = j->begin(); it != j->end(); ++it) {
      if (it.key() == kNanSentinel || it.key() == kInfSentinel || it.key() == kNegInfSentinel) {
        return false;
      }
      if (!RestoreNonFinite(&it.value())) return false;
    }
  }
  return true;
}

// json.loads: true on success, else *error says why.
bool ParsePyJson(std::string_view text, Json* out, std::string* error) {
  try {
    *out = Json::parse(ReplaceNonFiniteTokens(text));
  } catch (const Json::exception& e) {
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) {
      what = what.substr(bracket + 2);
    }
    *error = absl::StrCat("not valid JSON (", what, ")");
    return false;
  }
  if (!RestoreNonFinite(out)) {
    *error = "not valid JSON (NaN or Infinity as an object key)";
    return false;
  }
  return true;
}

// json.dumps with its default separators.
void DumpPyJson(const Json& j, std::string* out) {
  switch (j.type()) {
    case Json::value_t::null:
      *out += "null";
      return;
    case Json::value_t::boolean:
      *out += j.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      *out += std::to_string(j.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      *out += std::to_string(j.get<uint64_t>());
      return;
    case Json::value_t::number_float:
      *out += JsonFloat(j.get<double>());
      return;
    case Json::value_t::string:
      *out += JsonString(j.get_ref<const std::string&>());
      return;
    case Json::value_t::array: {
      *out += '[';
      bool first = true;
      for (const Json& e : j) {
        if (!first) *out += ", ";
        first = false;
        DumpPyJson(e, out);
      }
      *out += ']';
      return;
    }
    case Json::value_t::object: {
      *out += '{';
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) *out += ", ";
        first = false;
        *out += JsonString(it.key());
        *out += ": ";
        DumpPyJson(it.value(), out);
      }
      *out += '}';
      return;
    }
    default:
      *out += "null";
      return;
  }
}

std::string DumpPyJson(const Json& j) {
  std::string out;
  DumpPyJson(j, &out);
  return out;
}

// Decodes one UTF-8 code point at text[*i], advancing *i; invalid bytes give U+FFFD.
uint32_t NextCodePoint(std::string_view text, size_t* i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(*i);
  if (c < 0x80) {
    ++*i;
    return c;
  }
  int len = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    ++*i;
    return 0xFFFD;
  }
  if (*i + len > text.size()) {
    ++*i;
    return 0xFFFD;
  }
  for (int k = 1; k < len; ++k) {
    const unsigned char cc = b(*i + k);
    if ((cc & 0xC0) != 0x80) {
      ++*i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return 0xFFFD;
  }
  *i += len;
  return cp;
}

void AppendUnicodeEscape(uint32_t unit, std::string* out) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\u%04x", unit);
  *out += buf;
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

bool IsOptunaDatetime(const std::string& s) {
  // YYYY-MM-DDTHH:MM:SS.ffffff
  static constexpr char kPattern[] = "dddd-dd-ddTdd:dd:dd.dddddd";
  if (s.size() != sizeof(kPattern) - 1) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (kPattern[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i]))
                           : s[i] != kPattern[i]) {
      return false;
    }
  }
  return true;
}

absl::Status ReadWholeFd(int fd, const std::string& path, std::string* out) {
  out->clear();
  char buf[1 << 16];
  off_t offset = 0;
  while (true) {
    const ssize_t n = ::pread(fd, buf, sizeof(buf), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat(path, ": read failed: ", ErrnoText(errno)));
    }
    if (n == 0) return absl::OkStatus();
    out->append(buf, static_cast<size_t>(n));
    offset += n;
  }
}

// ---------------------------------------------------------------------------------------------
// Replay, as Optuna's JournalStorageReplayResult.

// A malformed operation; caught in Replayer::Apply and turned into a located status.
struct OpError {
  std::string message;
};

[[noreturn]] void Fail(std::string message) { throw OpError{std::move(message)}; }

const Json& Field(const Json& log, const char* key) {
  auto it = log.find(key);
  if (it == log.end()) Fail(absl::StrCat("missing \"", key, "\""));
  return *it;
}

int64_t AsInt(const Json& v, const std::string& what) {
  if (!v.is_number_integer())
    Fail(absl::StrCat(what, ": expected an integer, got ", DumpPyJson(v)));
  return v.get<int64_t>();
}

double AsNumber(const Json& v, const std::string& what) {
  if (!v.is_number()) Fail(absl::StrCat(what, ": expected a number, got ", DumpPyJson(v)));
  return v.get<double>();
}

const std::string& AsString(const Json& v, const std::string& what) {
  if (!v.is_string()) Fail(absl::StrCat(what, ": expected a string, got ", DumpPyJson(v)));
  return v.get_ref<const std::string&>();
}

// A one-entry {"key": value} (Optuna asserts len == 1).
std::pair<std::string, const Json*> SingleAttr(const Json& log, const char* field) {
  const Json& attr = Field(log, field);
  if (!attr.is_object() || attr.size() != 1) {
    Fail(absl::StrCat("\"", field, "\": expected an object with one key, got ", DumpPyJson(attr)));
  }
  return {attr.begin().key(), &attr.begin().value()};
}

TrialState AsState(const Json& v) {
  const int64_t s = AsInt(v, "state");
  if (s < 0 || s > 4) Fail(absl::StrCat("state: no TrialState ", s));
  return static_cast<TrialState>(s);
}

// A distribution as json_to_distribution reads it; `name` is the Python class (compatibility
// checks compare classes).
struct ParsedDistribution {
  std::string name;
  Distribution dist;
};

ParsedDistribution ParseDistribution(const Json& text_json) {
  const std::string& text = AsString(text_json, "distribution");
  Json j;
  std::string error;
  if (!ParsePyJson(text, &j, &error)) Fail(absl::StrCat("distribution: ", error));
  if (!j.is_object() || !j.contains("name") || !j.contains("attributes") ||
      !j["name"].is_string() || !j["attributes"].is_object()) {
    Fail(absl::StrCat("distribution: expected {\"name\": ..., \"attributes\": {...}}, got ", text));
  }
  ParsedDistribution out;
  out.name = j["name"].get<std::string>();
  const Json& attrs = j["attributes"];
  const auto attr = [&](const char* key) -> const Json& {
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
      const Json& log = attr("log");
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
    const Json& low = attr("low");
    const Json& high = attr("high");
    const Json& log = attr("log");
    if (!low.is_number_integer() || !high.is_number_integer()) {
      Fail("distribution: IntDistribution low and high must be integers");
    }
    if (!log.is_boolean()) Fail("distribution log: expected true or false");
    const Json& step = attr("step");
    if (!step.is_number_integer() || step.get<int64_t>() != 1) {
      Fail("distribution: an IntDistribution with a step other than 1 is not supported");
    }
    out.dist.low = static_cast<double>(low.get<int64_t>());
    out.dist.high = static_cast<double>(high.get<int64_t>());
    out.dist.log = log.get<bool>();
    if (!(out.dist.low <= out.dist.high)) Fail("distribution: low > high");
  } else if (out.name == "CategoricalDistribution") {
    const Json& choices = attr("choices");
    if (!choices.is_array() || choices.empty()) {
      Fail("distribution choices: expected a non-empty list");
    }
    out.dist.kind = Distribution::Kind::kCategorical;
    if (choices[0].is_string()) {
      // String choices: held by their index (hpo/search_space.h).
      for (const Json& c : choices) {
        if (!c.is_string()) Fail("distribution choices: mixed strings and numbers are not supported");
        out.dist.choices.push_back(static_cast<double>(out.dist.labels.size()));
        out.dist.labels.push_back(c.get<std::string>());
      }
    } else {
      out.dist.integer_choices = true;
      for (const Json& c : choices) {
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
double ToExternal(const ParsedDistribution& d, const Json& internal_json) {
  const double internal = AsNumber(internal_json, "param_value_internal");
  if (d.dist.kind != Distribution::Kind::kCategorical) return internal;
  if (!std::isfinite(internal)) Fail("param_value_internal: not a choice index");
  const double index = std::trunc(internal);  // Python's int()
  if (index < 0 || index >= static_cast<double>(d.dist.choices.size())) {
    Fail(absl::StrCat("param_value_internal: choice index ", JsonFloat(internal), " out of range"));
  }
  return d.dist.choices[static_cast<size_t>(index)];
}

void ApplyUserAttr(const std::string& key, const Json& v, Trial* t) {
  const std::string what = absl::StrCat("user attr \"", key, "\"");
  if (key == "lr_effective") {
    t->lr_effective = AsNumber(v, what);
  } else if (key == "phase") {
    t->phase = AsString(v, what);
  } else if (key == "point") {
    t->point = AsInt(v, what);
  } else if (key == "fail_reason") {
    t->fail_reason = AsString(v, what);
  } else if (key == "stderr_tail") {
    t->stderr_tail = AsString(v, what);
  } else if (key == "placement") {
    t->placement = AsString(v, what);
  }
  // Other user attrs have no place in Trial.
}

void ApplySystemAttr(const std::string& key, const Json& v, Trial* t) {
  const std::string what = absl::StrCat("system attr \"", key, "\"");
  if (key == "failed_trial") {
    t->failed_trial = AsInt(v, what);
  } else if (key == "retry_history") {
    if (!v.is_array()) Fail(absl::StrCat(what, ": expected a list"));
    t->retry_history.clear();
    for (const Json& e : v) t->retry_history.push_back(AsInt(e, what));
  } else if (v.is_number()) {
    t->system_attrs[key] = v.get<double>();
  } else {
    t->system_attrs.erase(key);  // non-numeric system attrs have no place in Trial
  }
}

std::optional<double> SingleValue(const Json& values) {
  if (values.is_null()) return std::nullopt;
  if (!values.is_array() || values.size() != 1) {
    Fail(absl::StrCat("values: expected null or one value (single-objective), got ",
                      DumpPyJson(values)));
  }
  return AsNumber(values[0], "values");
}

std::string DatetimeField(const Json& v, const char* what) {
  if (v.is_null()) return "";
  return AsString(v, what);
}

struct StudyRecord {
  std::string name;
  std::vector<int> directions;
  std::map<std::string, std::string> user_attrs;
  std::vector<int64_t> trial_ids;
};

struct TrialRecord {
  int64_t study_id = 0;
  Trial trial;
  std::map<std::string, ParsedDistribution> distributions;
};

class Replayer {
 public:
  explicit Replayer(std::string path) : path_(std::move(path)) {}

  // JournalFileStorage.read_logs + apply_logs over the whole file.
  absl::Status ReplayText(std::string_view content) {
    std::vector<std::pair<int64_t, Json>> logs;
    std::optional<std::pair<int64_t, std::string>> decode_error;
    size_t pos = 0;
    int64_t line_no = 0;
    while (pos < content.size()) {
      const size_t nl = content.find('\n', pos);
      const size_t end = nl == std::string_view::npos ? content.size() : nl + 1;
      const std::string_view line = content.substr(pos, end - pos);
      pos = end;
      ++line_no;
      if (decode_error) return LineError(decode_error->first, decode_error->second);
      Json log;
      std::string error;
      if (!ParsePyJson(line, &log, &error)) {
        decode_error.emplace(line_no, error);  // ignored if it is the last line
        continue;
      }
      logs.emplace_back(line_no, std::move(log));
    }
    for (const auto& [line, log] : logs) RETURN_IF_ERROR(Apply(line, log));
    return absl::OkStatus();
  }

  absl::Status Apply(int64_t line, const Json& log) {
    try {
      ApplyOrThrow(log);
    } catch (const OpError& e) {
      return LineError(line, e.message);
    } catch (const Json::exception& e) {
      return LineError(line, e.what());
    }
    ++operations_;
    return absl::OkStatus();
  }

  absl::StatusOr<JournalContents> Contents() const {
    JournalContents out;
    out.operations = operations_;
    if (studies_.size() > 1) {
      std::vector<std::string> names;
      for (const auto& [id, s] : studies_) names.push_back(s.name);
      return absl::FailedPreconditionError(
          absl::StrCat(path_, ": holds several studies (", absl::StrJoin(names, ", "),
                       "); tunefleet keeps one study per journal"));
    }
    if (studies_.empty()) return out;
    const StudyRecord& s = studies_.begin()->second;
    if (s.directions.size() != 1 ||
        (s.directions[0] != kMinimize && s.directions[0] != kMaximize)) {
      return absl::FailedPreconditionError(absl::StrCat(
          path_, ": study '", s.name, "' is not a single-objective study with a direction"));
    }
    out.study_name = s.name;
    out.maximize = s.directions[0] == kMaximize;
    out.study.name = s.name;
    out.study.maximize = out.maximize;
    out.study_user_attrs = s.user_attrs;
    for (int64_t id : s.trial_ids) {
      const TrialRecord& r = trials_[id];
      out.study.trials.push_back(r.trial);
      SearchSpace space;
      for (const auto& [name, d] : r.distributions) space[name] = d.dist;
      out.distributions.push_back(std::move(space));
    }
    return out;
  }

  const std::map<int64_t, StudyRecord>& studies() const { return studies_; }
  const std::vector<TrialRecord>& trials() const { return trials_; }
  int64_t next_study_id() const { return next_study_id_; }

 private:
  absl::Status LineError(int64_t line, const std::string& message) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ":", line, ": ", message));
  }

  bool StudyExists(int64_t id) const { return studies_.count(id) > 0; }

  // _trial_exists_and_updatable for a foreign worker.
  bool Updatable(int64_t trial_id) const {
    return trial_id >= 0 && trial_id < static_cast<int64_t>(trials_.size()) &&
           !IsFinished(trials_[trial_id].trial.state);
  }

  void ApplyOrThrow(const Json& log) {
    if (!log.is_object()) Fail(absl::StrCat("expected a JSON object, got ", DumpPyJson(log)));
    const int64_t op = AsInt(Field(log, "op_code"), "op_code");
    switch (op) {
      case kCreateStudy: {
        const std::string& name = AsString(Field(log, "study_name"), "study_name");
        const Json& dirs = Field(log, "directions");
        if (!dirs.is_array()) Fail("directions: expected a list");
        std::vector<int> directions;
        for (const Json& d : dirs) {
          const int64_t v = AsInt(d, "directions");
          if (v < 0 || v > 2) Fail(absl::StrCat("directions: no StudyDirection ", v));
          directions.push_back(static_cast<int>(v));
        }
        for (const auto& [id, s] : studies_) {
          if (s.name == name) return;  // duplicate name: ignored
        }
        StudyRecord& s = studies_[next_study_id_++];
        s.name = name;
        s.directions = std::move(directions);
        return;
      }
      case kDeleteStudy: {
        studies_.erase(AsInt(Field(log, "study_id"), "study_id"));
        return;
      }
      case kSetStudyUserAttr: {
        const int64_t id = AsInt(Field(log, "study_id"), "study_id");
        if (!StudyExists(id)) return;
        auto [key, value] = SingleAttr(log, "user_attr");
        studies_[id].user_attrs[key] = DumpPyJson(*value);
        return;
      }
      case kSetStudySystemAttr: {
        const int64_t id = AsInt(Field(log, "study_id"), "study_id");
        if (!StudyExists(id)) return;
        SingleAttr(log, "system_attr");
        return;
      }
      case kCreateTrial:
        CreateTrial(log);
        return;
      case kSetTrialParam: {
        const int64_t id = AsInt(Field(log, "trial_id"), "trial_id");
        if (!Updatable(id)) return;
        const std::string& name = AsString(Field(log, "param_name"), "param_name");
        const Json& internal = Field(log, "param_value_internal");
        ParsedDistribution dist = ParseDistribution(Field(log, "distribution"));
        for (int64_t prev_id : studies_.at(trials_[id].study_id).trial_ids) {
          const TrialRecord& prev = trials_[prev_id];
          if (prev.trial.params.count(name)) {
            if (!Compatible(prev.distributions.at(name), dist)) return;  // ignored
            break;
          }
        }
        TrialRecord& r = trials_[id];
        r.trial.params[name] = ToExternal(dist, internal);
        r.distributions[name] = std::move(dist);
        return;
      }
      case kSetTrialStateValues: {
        const int64_t id = AsInt(Field(log, "trial_id"), "trial_id");
        if (!Updatable(id)) return;
        const TrialState state = AsState(Field(log, "state"));
        Trial& t = trials_[id].trial;
        if (state == TrialState::kRunning && t.state == TrialState::kRunning) return;
        if (state == TrialState::kRunning) {
          t.datetime_start = AsString(Field(log, "datetime_start"), "datetime_start");
        }
        if (IsFinished(state)) {
          t.datetime_complete = AsString(Field(log, "datetime_complete"), "datetime_complete");
        }
        std::optional<double> value = SingleValue(Field(log, "values"));
        t.state = state;
        if (value) t.value = value;
        return;
      }
      case kSetTrialIntermediateValue: {
        const int64_t id = AsInt(Field(log, "trial_id"), "trial_id");
        if (!Updatable(id)) return;
        const int64_t step = AsInt(Field(log, "step"), "step");
        trials_[id].trial.intermediate_values[step] =
            AsNumber(Field(log, "intermediate_value"), "intermediate_value");
        return;
      }
      case kSetTrialUserAttr: {
        const int64_t id = AsInt(Field(log, "trial_id"), "trial_id");
        if (!Updatable(id)) return;
        auto [key, value] = SingleAttr(log, "user_attr");
        ApplyUserAttr(key, *value, &trials_[id].trial);
        return;
      }
      case kSetTrialSystemAttr: {
        const int64_t id = AsInt(Field(log, "trial_id"), "trial_id");
        if (!Updatable(id)) return;
        auto [key, value] = SingleAttr(log, "system_attr");
        ApplySystemAttr(key, *value, &trials_[id].trial);
        return;
      }
      default:
        Fail(absl::StrCat("unknown op_code ", op));
    }
  }

  // _apply_create_trial, including the template fields Optuna writes for enqueued / added
  // trials.
  void CreateTrial(const Json& log) {
    const int64_t study_id = AsInt(Field(log, "study_id"), "study_id");
    if (!StudyExists(study_id)) return;
    TrialRecord r;
    r.study_id = study_id;
    Trial& t = r.trial;
    if (auto it = log.find("distributions"); it != log.end()) {
      if (!it->is_object()) Fail("distributions: expected an object");
      for (auto d = it->begin(); d != it->end(); ++d) {
        r.distributions[d.key()] = ParseDistribution(d.value());
      }
    }
    if (auto it = log.find("params"); it != log.end()) {
      if (!it->is_object()) Fail("params: expected an object");
      for (auto p = it->begin(); p != it->end(); ++p) {
        auto d = r.distributions.find(p.key());
        if (d == r.distributions.end()) {
          Fail(absl::StrCat("params: \"", p.key(), "\" has no distribution"));
        }
        t.params[p.key()] = ToExternal(d->second, p.value());
      }
    }
    t.datetime_start = DatetimeField(Field(log, "datetime_start"), "datetime_start");
    if (auto it = log.find("datetime_complete"); it != log.end()) {
      t.datetime_complete = AsString(*it, "datetime_complete");
    }
    t.state = TrialState::kRunning;
    if (auto it = log.find("state"); it != log.end()) t.state = AsState(*it);
    if (auto it = log.find("user_attrs"); it != log.end()) {
      if (!it->is_object()) Fail("user_attrs: expected an object");
      for (auto a = it->begin(); a != it->end(); ++a) ApplyUserAttr(a.key(), a.value(), &t);
    }
    if (auto it = log.find("system_attrs"); it != log.end()) {
      if (!it->is_object()) Fail("system_attrs: expected an object");
      for (auto a = it->begin(); a != it->end(); ++a) ApplySystemAttr(a.key(), a.value(), &t);
    }
    std::optional<double> value;
    if (auto it = log.find("values"); it != log.end()) value = SingleValue(*it);
    if (auto it = log.find("value"); it != log.end() && !it->is_null()) {
      if (value) Fail("both value and values are set");
      value = AsNumber(*it, "value");
    }
    t.value = value;
    if (auto it = log.find("intermediate_values"); it != log.end()) {
      if (!it->is_object()) Fail("intermediate_values: expected an object");
      for (auto v = it->begin(); v != it->end(); ++v) {
        char* end = nullptr;
        const long long step = std::strtoll(v.key().c_str(), &end, 10);
        if (v.key().empty() || *end != '\0') {
          Fail(absl::StrCat("intermediate_values: step \"", v.key(), "\" is not an integer"));
        }
        t.intermediate_values[step] = AsNumber(v.value(), "intermediate_values");
      }
    }
    StudyRecord& s = studies_.at(study_id);
    t.number = static_cast<int64_t>(s.trial_ids.size());
    s.trial_ids.push_back(static_cast<int64_t>(trials_.size()));
    trials_.push_back(std::move(r));
  }

  const std::string path_;
  std::map<int64_t, StudyRecord> studies_;
  std::vector<TrialRecord> trials_;  // by Optuna trial_id
  int64_t next_study_id_ = 0;
  int64_t operations_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public helpers.

std::string JsonFloat(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  const bool negative = std::signbit(value);
  const double v = std::fabs(value);
  // The fewest significant digits that read back as v, and among those the nearest to v (as
  // Python's repr, David Gay's shortest mode): for each length, the correctly rounded digits,
  // else their neighbour towards v (at power-of-two boundaries only that one may round-trip).
  uint64_t mantissa = 0;  // v ~ mantissa * 10^scale
  int scale = 0;
  if (v != 0) {
    char buf[40];
    char candidate[48];
    const auto round_trips = [&](uint64_t m, int s) {
      std::snprintf(candidate, sizeof(candidate), "%llue%d", static_cast<unsigned long long>(m), s);
      return std::strtod(candidate, nullptr) == v;
    };
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof(buf), "%.*e", digits - 1, v);
      uint64_t m = 0;
      const char* p = buf;
      for (; *p != 'e'; ++p) {
        if (*p != '.') m = m * 10 + static_cast<uint64_t>(*p - '0');
      }
      const int s = std::atoi(p + 1) - (digits - 1);
      if (round_trips(m, s)) {
        mantissa = m, scale = s;
        break;
      }
      const uint64_t neighbour = std::strtod(buf, nullptr) < v ? m + 1 : m - 1;
      if (neighbour > 0 && round_trips(neighbour, s)) {
        mantissa = neighbour, scale = s;
        break;
      }
    }
  }
  std::string digits = std::to_string(mantissa);
  const int exponent = scale + static_cast<int>(digits.size()) - 1;  // of the first digit
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  // Python's repr: scientific notation when the exponent is < -4 or >= 16.
  std::string out = negative ? "-" : "";
  const int point = exponent + 1;  // digits before the decimal point
  if (mantissa != 0 && (exponent < -4 || exponent >= 16)) {
    out += digits[0];
    if (digits.size() > 1) absl::StrAppend(&out, ".", digits.substr(1));
    char e[16];
    std::snprintf(e, sizeof(e), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += e;
  } else if (mantissa == 0) {
    out += "0.0";
  } else if (point <= 0) {
    absl::StrAppend(&out, "0.", std::string(-point, '0'), digits);
  } else if (point >= static_cast<int>(digits.size())) {
    absl::StrAppend(&out, digits, std::string(point - digits.size(), '0'), ".0");
  } else {
    absl::StrAppend(&out, digits.substr(0, point), ".", digits.substr(point));
  }
  return out;
}

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size()) {
    const uint32_t cp = NextCodePoint(text, &i);
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (cp >= 0x20 && cp <= 0x7E) {
      out += static_cast<char>(cp);
    } else if (cp < 0x10000) {
      AppendUnicodeEscape(cp, &out);
    } else {
      const uint32_t v = cp - 0x10000;
      AppendUnicodeEscape(0xD800 | (v >> 10), &out);
      AppendUnicodeEscape(0xDC00 | (v & 0x3FF), &out);
    }
  }
  out += '"';
  return out;
}

absl::StatusOr<std::string> NormalizeJson(std::string_view text) {
  Json j;
  std::string error;
  if (!ParsePyJson(text, &j, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("'", std::string(text), "' is ", error));
  }
  return DumpPyJson(j);
}

std::string OptunaDatetimeNow() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  localtime_r(&ts.tv_sec, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06ld", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long>(ts.tv_nsec / 1000));
  return buf;
}

// ---------------------------------------------------------------------------------------------
// The journal's folder.

namespace {

bool IsFolder(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::Status FolderError(const std::string& path) {
  std::string example = path;
  while (example.size() > 1 && example.back() == '/') example.pop_back();
  return absl::InvalidArgumentError(
      absl::StrCat("journal ", ClipPath(path), " is a folder, not a journal file (name a file, "
                   "e.g. ", ClipPath(example), "/journal.log)"));
}

// "a/b/j.log" -> "a/b", "j.log" -> ".", "/j.log" -> "/".
std::string ParentFolder(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status PrepareJournalFolder(const std::string& path, bool create) {
  if (path.empty()) return absl::InvalidArgumentError("the journal path is empty");
  if (IsFolder(path) || path.back() == '/') return FolderError(path);
  const std::string parent = ParentFolder(path);
  struct stat st;
  if (::stat(parent.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat("journal ", ClipPath(path), ": ",
                                                     ClipPath(parent), " is not a folder"));
    }
    return absl::OkStatus();
  }
  // The folders from the first one named to the journal's own, and whether the path may
  // climb out of the working directory.
  std::vector<std::string> prefixes;
  bool climbs = path[0] == '/';
  for (size_t i = path[0] == '/' ? 1 : 0; i <= parent.size(); ++i) {
    if (i == parent.size() || parent[i] == '/') {
      const std::string prefix = parent.substr(0, i);
      const size_t start = prefix.rfind('/') == std::string::npos ? 0 : prefix.rfind('/') + 1;
      if (prefix.compare(start, std::string::npos, "..") == 0) climbs = true;
      if (!prefix.empty() && (prefixes.empty() || prefixes.back() != prefix)) {
        prefixes.push_back(prefix);
      }
    }
  }
  // The first missing folder; an absolute (or climbing) path may miss only the last one.
  size_t first_missing = prefixes.size();
  for (size_t i = 0; i < prefixes.size(); ++i) {
    if (!IsFolder(prefixes[i])) {
      first_missing = i;
      break;
    }
  }
  if (first_missing == prefixes.size()) return absl::OkStatus();  // raced: it exists now
  if (climbs && first_missing + 1 < prefixes.size()) {
    return absl::NotFoundError(absl::StrCat(
        "journal ", ClipPath(path), ": no such folder: ", ClipPath(prefixes[first_missing]),
        " (hpo creates only the journal's own folder of an absolute path)"));
  }
  if (!create) return absl::OkStatus();
  for (size_t i = first_missing; i < prefixes.size(); ++i) {
    if (::mkdir(prefixes[i].c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(absl::StrCat("journal ", ClipPath(path), ": cannot create folder ",
                                              ClipPath(prefixes[i]), ": ", ErrnoText(errno)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ReadJournal.

absl::StatusOr<JournalContents> ReadJournal(const std::string& path) {
  if (IsFolder(path)) return FolderError(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string message =
        absl::StrCat(ClipPath(path), ": cannot open journal: ", ErrnoText(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::InternalError(message);
  }
  std::string content;
  const absl::Status read = ReadWholeFd(fd, path, &content);
  ::close(fd);
  RETURN_IF_ERROR(read);
  Replayer replayer(path);
  RETURN_IF_ERROR(replayer.ReplayText(content));
  return replayer.Contents();
}

absl::Status CheckJournalPath(const std::string& path) {
  return PrepareJournalFolder(path, /*create=*/false);
}

// ---------------------------------------------------------------------------------------------
// JournalWriter.

JournalWriter::JournalWriter(std::string path, int fd)
    : path_(std::move(path)), fd_(fd), worker_id_(absl::StrCat("tunefleet-", ::getpid())) {}

JournalWriter::~JournalWriter() { ::close(fd_); }

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Open(const std::string& path) {
  RETURN_IF_ERROR(PrepareJournalFolder(path, /*create=*/true));
  const std::string parent = ParentFolder(path);
  struct stat st;
  const bool existed = ::stat(path.c_str(), &st) == 0;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(path, ": cannot open journal: ", ErrnoText(errno)));
  }
  std::unique_ptr<JournalWriter> writer(new JournalWriter(path, fd));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": journal is open for writing elsewhere (", ErrnoText(errno), ")"));
  }
  if (!existed) {
    // Make the new directory entry durable.
    const int dir = ::open(parent.c_str(), O_RDONLY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }

  std::string content;
  RETURN_IF_ERROR(ReadWholeFd(fd, path, &content));
  if (!content.empty()) {
    // The last line: torn (cut it away), complete but unterminated (terminate it), or fine.
    const bool terminated = content.back() == '\n';
    const std::string_view body(content.data(), content.size() - (terminated ? 1 : 0));
    const size_t previous_newline = body.rfind('\n');
    const size_t last_start = previous_newline == std::string_view::npos ? 0 : previous_newline + 1;
    Json last;
    std::string error;
    const bool complete = ParsePyJson(body.substr(last_start), &last, &error) && last.is_object() &&
                          last.contains("op_code");
    if (!complete) {
      if (::ftruncate(fd, static_cast<off_t>(last_start)) != 0) {
        return absl::InternalError(
            absl::StrCat(path, ": cannot cut torn last line: ", ErrnoText(errno)));
      }
      writer->dropped_bytes_ = static_cast<int64_t>(content.size() - last_start);
      content.resize(last_start);
    } else if (!terminated) {
      content += '\n';
      RETURN_IF_ERROR(writer->Append("\n", /*sync=*/false));
    }
    if (writer->dropped_bytes_ > 0 || !terminated) {
      if (::fsync(fd) != 0) {
        return absl::InternalError(absl::StrCat(path, ": fsync failed: ", ErrnoText(errno)));
      }
    }
  }

  Replayer replayer(path);
  RETURN_IF_ERROR(replayer.ReplayText(content));
  if (replayer.studies().size() > 1) return replayer.Contents().status();
  writer->total_trials_ = static_cast<int64_t>(replayer.trials().size());
  writer->next_study_id_ = replayer.next_study_id();
  if (!replayer.studies().empty()) {
    const auto& [id, study] = *replayer.studies().begin();
    writer->has_study_ = true;
    writer->study_id_ = id;
    writer->study_name_ = study.name;
    for (int64_t trial_id : study.trial_ids) {
      writer->trial_ids_.push_back(trial_id);
      writer->finished_.push_back(IsFinished(replayer.trials()[trial_id].trial.state));
    }
  }
  return writer;
}

int64_t JournalWriter::next_trial_number() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(trial_ids_.size());
}

std::string JournalWriter::Begin(int op_code) const {
  return absl::StrCat("{\"op_code\": ", op_code, ", \"worker_id\": ", JsonString(worker_id_));
}

absl::Status JournalWriter::Append(const std::string& line, bool sync) {
  if (!broken_.ok()) return broken_;
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const absl::Status error =
          absl::InternalError(absl::StrCat(path_, ": write failed: ", ErrnoText(errno)));
      // A partial line: appending more would bury it mid-file. Reopening cuts it away.
      if (written > 0) broken_ = error;
      return error;
    }
    written += static_cast<size_t>(n);
  }
  if (sync && ::fsync(fd_) != 0) {
    broken_ = absl::InternalError(absl::StrCat(path_, ": fsync failed: ", ErrnoText(errno)));
    return broken_;
  }
  return absl::OkStatus();
}

absl::Status JournalWriter::CheckUpdatable(int64_t trial_number) const {
  if (trial_number < 0 || trial_number >= static_cast<int64_t>(trial_ids_.size())) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": no trial ", trial_number, " in the journal"));
  }
  if (finished_[trial_number]) {
    return absl::FailedPreconditionError(absl::StrCat(
        path_, ": trial ", trial_number, " has finished; Optuna ignores later updates"));
  }
  return absl::OkStatus();
}

absl::Status JournalWriter::CreateStudy(const std::string& study_name, bool maximize) {
  std::lock_guard<std::mutex> lock(mu_);
  if (has_study_) {
    const std::string message =
        absl::StrCat(path_, ": journal already holds study '", study_name_, "'");
    return study_name == study_name_ ? absl::AlreadyExistsError(message)
                                     : absl::FailedPreconditionError(message);
  }
  if (study_name.empty()) return absl::InvalidArgumentError("study name is empty");
  RETURN_IF_ERROR(
      Append(absl::StrCat(Begin(kCreateStudy), ", \"study_name\": ", JsonString(study_name),
                          ", \"directions\": [", maximize ? kMaximize : kMinimize, "]}\n"),
             /*sync=*/true));
  has_study_ = true;
  study_name_ = study_name;
  // Optuna numbers studies 0, 1, ... in creation order (deleted ones included).
  study_id_ = next_study_id_++;
  return absl::OkStatus();
}

absl::Status JournalWriter::SetStudyUserAttr(const std::string& key,
                                             const std::string& json_value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_study_) return absl::FailedPreconditionError(absl::StrCat(path_, ": no study yet"));
  ASSIGN_OR_RETURN(std::string value, NormalizeJson(json_value));
  return Append(absl::StrCat(Begin(kSetStudyUserAttr), ", \"study_id\": ", study_id_,
                             ", \"user_attr\": {", JsonString(key), ": ", value, "}}\n"),
                /*sync=*/false);
}

absl::Status JournalWriter::CreateTrial(const Trial& trial, const SearchSpace& space) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_study_) return absl::FailedPreconditionError(absl::StrCat(path_, ": no study yet"));
  if (trial.number != static_cast<int64_t>(trial_ids_.size())) {
    return absl::FailedPreconditionError(absl::StrCat(
        path_, ": trial number ", trial.number, " is not the next one (", trial_ids_.size(), ")"));
  }
  if (!trial.datetime_start.empty() && !IsOptunaDatetime(trial.datetime_start)) {
    return absl::InvalidArgumentError(absl::StrCat("trial ", trial.number, ": datetime_start '",
                                                   trial.datetime_start,
                                                   "' is not YYYY-MM-DDTHH:MM:SS.ffffff"));
  }
  // Validate everything before writing anything.
  std::vector<std::string> lines;
  const int64_t trial_id = total_trials_;
  const std::string start =
      trial.datetime_start.empty() ? OptunaDatetimeNow() : trial.datetime_start;
  lines.push_back(absl::StrCat(Begin(kCreateTrial), ", \"study_id\": ", study_id_,
                               ", \"datetime_start\": ", JsonString(start), "}\n"));
  for (const auto& [name, value] : trial.params) {
    auto it = space.find(name);
    if (it == space.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("trial ", trial.number, ": param '", name, "' is not in the search space"));
    }
    const Distribution& d = it->second;
    if (!d.Contains(value)) {
      return absl::InvalidArgumentError(absl::StrCat("trial ", trial.number, ": param ", name, "=",
                                                     JsonFloat(value), " is outside ",
                                                     d.Describe()));
    }
    const double internal = d.ToInternal(value);
    // Optuna writes a categorical's index as an int, a float param as a float.
    const std::string internal_text = d.kind == Distribution::Kind::kCategorical
                                          ? std::to_string(static_cast<int64_t>(internal))
                                          : JsonFloat(internal);
    lines.push_back(absl::StrCat(Begin(kSetTrialParam), ", \"trial_id\": ", trial_id,
                                 ", \"param_name\": ", JsonString(name),
                                 ", \"param_value_internal\": ", internal_text,
                                 ", \"distribution\": ", JsonString(d.ToOptunaJson()), "}\n"));
  }
  const auto user_attr = [&](const std::string& key, const std::string& value_json) {
    lines.push_back(absl::StrCat(Begin(kSetTrialUserAttr), ", \"trial_id\": ", trial_id,
                                 ", \"user_attr\": {", JsonString(key), ": ", value_json, "}}\n"));
  };
  const auto system_attr = [&](const std::string& key, const std::string& value_json) {
    lines.push_back(absl::StrCat(Begin(kSetTrialSystemAttr), ", \"trial_id\": ", trial_id,
                                 ", \"system_attr\": {", JsonString(key), ": ", value_json,
                                 "}}\n"));
  };
  user_attr("lr_effective", JsonFloat(trial.lr_effective));
  user_attr("phase", JsonString(trial.phase));
  user_attr("point", std::to_string(trial.point));
  if (trial.failed_trial) {
    system_attr("failed_trial", std::to_string(*trial.failed_trial));
    std::vector<std::string> history;
    for (int64_t n : trial.retry_history) history.push_back(std::to_string(n));
    system_attr("retry_history", absl::StrCat("[", absl::StrJoin(history, ", "), "]"));
  }
  for (const auto& [key, value] : trial.system_attrs) system_attr(key, JsonFloat(value));

  RETURN_IF_ERROR(Append(lines[0], /*sync=*/false));
  trial_ids_.push_back(trial_id);
  finished_.push_back(false);
  ++total_trials_;
  for (size_t i = 1; i < lines.size(); ++i) RETURN_IF_ERROR(Append(lines[i], /*sync=*/false));
  return absl::OkStatus();
}

absl::Status JournalWriter::SetIntermediateValue(int64_t trial_number, int64_t step, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(CheckUpdatable(trial_number));
  return Append(
      absl::StrCat(Begin(kSetTrialIntermediateValue), ", \"trial_id\": ", trial_ids_[trial_number],
                   ", \"step\": ", step, ", \"intermediate_value\": ", JsonFloat(value), "}\n"),
      /*sync=*/false);
}

absl::Status JournalWriter::SetSystemAttr(int64_t trial_number, const std::string& key,
                                          double value) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(CheckUpdatable(trial_number));
  if (key == "failed_trial" || key == "retry_history") {
    return absl::InvalidArgumentError(absl::StrCat(
        "system attr '", key, "' is not a number; CreateTrial writes it from the Trial"));
  }
  return Append(
      absl::StrCat(Begin(kSetTrialSystemAttr), ", \"trial_id\": ", trial_ids_[trial_number],
                   ", \"system_attr\": {", JsonString(key), ": ", JsonFloat(value), "}}\n"),
      /*sync=*/false);
}

absl::Status JournalWriter::SetUserAttr(int64_t trial_number, const std::string& key,
                                        const std::string& json_value) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(CheckUpdatable(trial_number));
  ASSIGN_OR_RETURN(std::string value, NormalizeJson(json_value));
  // The attrs Trial holds must have the types ReadJournal expects, or the journal would not
  // read back.
  try {
    Json parsed;
    std::string error;
    ParsePyJson(value, &parsed, &error);  // parses: it was just normalized
    Trial scratch;
    ApplyUserAttr(key, parsed, &scratch);
  } catch (const OpError& e) {
    return absl::InvalidArgumentError(absl::StrCat("trial ", trial_number, ": ", e.message));
  }
  return Append(absl::StrCat(Begin(kSetTrialUserAttr), ", \"trial_id\": ", trial_ids_[trial_number],
                             ", \"user_attr\": {", JsonString(key), ": ", value, "}}\n"),
                /*sync=*/false);
}

absl::Status JournalWriter::Finish(const Trial& trial) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(CheckUpdatable(trial.number));
  if (!IsFinished(trial.state)) {
    return absl::InvalidArgumentError(
        absl::StrCat("trial ", trial.number, ": cannot finish as ", TrialStateName(trial.state)));
  }
  std::string values = "null";
  if (trial.state == TrialState::kComplete) {
    if (!trial.value) {
      return absl::InvalidArgumentError(
          absl::StrCat("trial ", trial.number, ": COMPLETE without a value"));
    }
    if (std::isnan(*trial.value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "trial ", trial.number, ": COMPLETE with value NaN (Optuna records it as FAIL)"));
    }
    values = absl::StrCat("[", JsonFloat(*trial.value), "]");
  } else if (trial.state == TrialState::kPruned && trial.value && std::isfinite(*trial.value)) {
    // Optuna's tell(PRUNED) records the last intermediate value as the trial's value.
    values = absl::StrCat("[", JsonFloat(*trial.value), "]");
  }
  if (!trial.datetime_complete.empty() && !IsOptunaDatetime(trial.datetime_complete)) {
    return absl::InvalidArgumentError(absl::StrCat("trial ", trial.number, ": datetime_complete '",
                                                   trial.datetime_complete,
                                                   "' is not YYYY-MM-DDTHH:MM:SS.ffffff"));
  }
  const int64_t trial_id = trial_ids_[trial.number];
  if (trial.state == TrialState::kFail) {
    const auto fail_attr = [&](const char* key, const std::string& value) -> absl::Status {
      if (value.empty()) return absl::OkStatus();
      return Append(
          absl::StrCat(Begin(kSetTrialUserAttr), ", \"trial_id\": ", trial_id, ", \"user_attr\": {",
                       JsonString(key), ": ", JsonString(value), "}}\n"),
          /*sync=*/false);
    };
    RETURN_IF_ERROR(fail_attr("fail_reason", trial.fail_reason));
    RETURN_IF_ERROR(fail_attr("stderr_tail", trial.stderr_tail));
  }
  const std::string complete =
      trial.datetime_complete.empty() ? OptunaDatetimeNow() : trial.datetime_complete;
  RETURN_IF_ERROR(
      Append(absl::StrCat(Begin(kSetTrialStateValues), ", \"trial_id\": ", trial_id,
                          ", \"state\": ", static_cast<int>(trial.state), ", \"values\": ", values,
                          ", \"datetime_complete\": ", JsonString(complete), "}\n"),
             /*sync=*/true));
  finished_[trial.number] = true;
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
