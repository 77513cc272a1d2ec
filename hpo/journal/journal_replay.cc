#include "hpo/journal/journal_replay.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/py_json.h"
#include "common/status_macros.h"
#include "hpo/journal/journal_decode.h"
#include "hpo/journal/journal_file.h"
#include "hpo/journal/journal_format.h"

namespace tunefleet {
namespace hpo {
namespace journal_internal {
namespace {

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
    std::vector<std::pair<int64_t, PyJson>> logs;
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
      absl::StatusOr<PyJson> log = ParsePyJson(line);
      if (!log.ok()) {
        decode_error.emplace(line_no, log.status().message());  // ignored if it is the last line
        continue;
      }
      logs.emplace_back(line_no, *std::move(log));
    }
    for (const auto& [line, log] : logs) RETURN_IF_ERROR(Apply(line, log));
    return absl::OkStatus();
  }

  absl::Status Apply(int64_t line, const PyJson& log) {
    try {
      ApplyOrThrow(log);
    } catch (const JournalOpError& e) {
      return LineError(line, e.message);
    } catch (const PyJson::exception& e) {
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
        (s.directions[0] != kDirectionMinimize && s.directions[0] != kDirectionMaximize)) {
      return absl::FailedPreconditionError(absl::StrCat(
          path_, ": study '", s.name, "' is not a single-objective study with a direction"));
    }
    out.study_name = s.name;
    out.maximize = s.directions[0] == kDirectionMaximize;
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

  void ApplyOrThrow(const PyJson& log) {
    if (!log.is_object()) Fail(absl::StrCat("expected a JSON object, got ", DumpPyJson(log)));
    const int64_t op = AsInt(Field(log, "op_code"), "op_code");
    switch (op) {
      case JournalOp::kCreateStudy: {
        const std::string& name = AsString(Field(log, "study_name"), "study_name");
        const PyJson& dirs = Field(log, "directions");
        if (!dirs.is_array()) Fail("directions: expected a list");
        std::vector<int> directions;
        for (const PyJson& d : dirs) {
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
      case JournalOp::kDeleteStudy: {
        studies_.erase(AsInt(Field(log, "study_id"), "study_id"));
        return;
      }
      case JournalOp::kSetStudyUserAttr: {
        const int64_t id = AsInt(Field(log, "study_id"), "study_id");
        if (!StudyExists(id)) return;
        auto [key, value] = SingleAttr(log, "user_attr");
        studies_[id].user_attrs[key] = DumpPyJson(*value);
        return;
      }
      case JournalOp::kSetStudySystemAttr: {
        const int64_t id = AsInt(Field(log, "study_id"), "study_id");
        if (!StudyExists(id)) return;
        SingleAttr(log, "system_attr");
        return;
      }
      case JournalOp::kCreateTrial:
        CreateTrial(log);
        return;
      case JournalOp::kSetTrialParam:
      case JournalOp::kSetTrialStateValues:
      case JournalOp::kSetTrialIntermediateValue:
      case JournalOp::kSetTrialUserAttr:
      case JournalOp::kSetTrialSystemAttr: {
        const int64_t id = AsInt(Field(log, "trial_id"), "trial_id");
        if (Updatable(id)) ApplyToTrial(op, log, &trials_[id]);
        return;
      }
      default:
        Fail(absl::StrCat("unknown op_code ", op));
    }
  }

  // An operation on an updatable trial (op_code 5 to 9).
  void ApplyToTrial(int64_t op, const PyJson& log, TrialRecord* r) {
    Trial& t = r->trial;
    switch (op) {
      case JournalOp::kSetTrialParam: {
        const std::string& name = AsString(Field(log, "param_name"), "param_name");
        const PyJson& internal = Field(log, "param_value_internal");
        ParsedDistribution dist = ParseDistribution(Field(log, "distribution"));
        for (int64_t prev_id : studies_.at(r->study_id).trial_ids) {
          const TrialRecord& prev = trials_[prev_id];
          if (prev.trial.params.count(name)) {
            if (!Compatible(prev.distributions.at(name), dist)) return;  // ignored
            break;
          }
        }
        t.params[name] = ToExternal(dist, internal);
        r->distributions[name] = std::move(dist);
        return;
      }
      case JournalOp::kSetTrialStateValues: {
        const TrialState state = AsState(Field(log, "state"));
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
      case JournalOp::kSetTrialIntermediateValue: {
        const int64_t step = AsInt(Field(log, "step"), "step");
        t.intermediate_values[step] =
            AsNumber(Field(log, "intermediate_value"), "intermediate_value");
        return;
      }
      default: {  // kSetTrialUserAttr, kSetTrialSystemAttr
        const bool user = op == JournalOp::kSetTrialUserAttr;
        auto [key, value] = SingleAttr(log, user ? "user_attr" : "system_attr");
        (user ? ApplyUserAttr : ApplySystemAttr)(key, *value, &t);
        return;
      }
    }
  }

  // _apply_create_trial, including the template fields Optuna writes for enqueued / added
  // trials.
  void CreateTrial(const PyJson& log) {
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
}  // namespace journal_internal

absl::StatusOr<JournalContents> ReadJournal(const std::string& path) {
  ASSIGN_OR_RETURN(std::string content, ReadJournalFile(path));
  journal_internal::Replayer replayer(path);
  RETURN_IF_ERROR(replayer.ReplayText(content));
  return replayer.Contents();
}

absl::StatusOr<JournalIds> ReplayJournalIds(const std::string& path, std::string_view content) {
  journal_internal::Replayer replayer(path);
  RETURN_IF_ERROR(replayer.ReplayText(content));
  if (replayer.studies().size() > 1) return replayer.Contents().status();
  JournalIds ids;
  ids.total_trials = static_cast<int64_t>(replayer.trials().size());
  ids.next_study_id = replayer.next_study_id();
  if (!replayer.studies().empty()) {
    const auto& [id, study] = *replayer.studies().begin();
    ids.has_study = true;
    ids.study_id = id;
    ids.study_name = study.name;
    for (int64_t trial_id : study.trial_ids) {
      ids.trial_ids.push_back(trial_id);
      ids.finished.push_back(IsFinished(replayer.trials()[trial_id].trial.state));
    }
  }
  return ids;
}

}  // namespace hpo
}  // namespace tunefleet
