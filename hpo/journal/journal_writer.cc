#include "hpo/journal/journal_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/py_json.h"
#include "common/safe_path.h"
#include "common/status_macros.h"
#include "hpo/journal/journal_decode.h"
#include "hpo/journal/journal_file.h"
#include "hpo/journal/journal_format.h"
#include "hpo/journal/journal_replay.h"

namespace tunefleet {
namespace hpo {

JournalWriter::JournalWriter(std::string path, int fd)
    : path_(std::move(path)), fd_(fd), worker_id_(absl::StrCat("tunefleet-", ::getpid())) {}

JournalWriter::~JournalWriter() { ::close(fd_); }

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Open(const std::string& path) {
  RETURN_IF_ERROR(MakeJournalFolders(path));
  const std::string parent = JournalFolder(path);
  struct stat st;
  const bool existed = ::lstat(path.c_str(), &st) == 0;
  // Under the checked folder's descriptor, never through a link (common/safe_path.h); a new
  // journal gets 0666 less the umask.
  absl::StatusOr<int> opened = OpenSafeFile(path, O_RDWR | O_CREAT | O_APPEND);
  if (!opened.ok()) {
    return absl::Status(opened.status().code(),
                        absl::StrCat("journal: ", opened.status().message()));
  }
  const int fd = *opened;
  std::unique_ptr<JournalWriter> writer(new JournalWriter(path, fd));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": journal is open for writing elsewhere (", std::strerror(errno), ")"));
  }
  if (!existed) {
    // Make the new directory entry durable.
    const int dir = ::open(parent.c_str(), O_RDONLY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }

  absl::MutexLock lock(&writer->mu_);
  ASSIGN_OR_RETURN(std::string content, ReadJournalFd(fd, path));
  RETURN_IF_ERROR(writer->RepairTail(&content));
  ASSIGN_OR_RETURN(JournalIds ids, ReplayJournalIds(path, content));
  writer->total_trials_ = ids.total_trials;
  writer->next_study_id_ = ids.next_study_id;
  writer->has_study_ = ids.has_study;
  writer->study_id_ = ids.study_id;
  writer->study_name_ = std::move(ids.study_name);
  writer->trial_ids_ = std::move(ids.trial_ids);
  writer->finished_ = std::move(ids.finished);
  return writer;
}

absl::Status JournalWriter::RepairTail(std::string* content) {
  if (content->empty()) return absl::OkStatus();
  // The last line: torn (cut it away), complete but unterminated (terminate it), or fine.
  const bool terminated = content->back() == '\n';
  const std::string_view body(content->data(), content->size() - (terminated ? 1 : 0));
  const size_t previous_newline = body.rfind('\n');
  const size_t last_start = previous_newline == std::string_view::npos ? 0 : previous_newline + 1;
  const absl::StatusOr<PyJson> last = ParsePyJson(body.substr(last_start));
  const bool complete = last.ok() && last->is_object() && last->contains("op_code");
  if (!complete) {
    if (::ftruncate(fd_, static_cast<off_t>(last_start)) != 0) {
      return absl::InternalError(
          absl::StrCat(path_, ": cannot cut torn last line: ", std::strerror(errno)));
    }
    dropped_bytes_ = static_cast<int64_t>(content->size() - last_start);
    content->resize(last_start);
  } else if (!terminated) {
    *content += '\n';
    RETURN_IF_ERROR(Append("\n", /*sync=*/false));
  }
  if ((dropped_bytes_ > 0 || !terminated) && ::fsync(fd_) != 0) {
    return absl::InternalError(absl::StrCat(path_, ": fsync failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

int64_t JournalWriter::next_trial_number() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(trial_ids_.size());
}

std::string JournalWriter::Begin(int op_code) const {
  return absl::StrCat("{\"op_code\": ", op_code, ", \"worker_id\": ", JsonString(worker_id_));
}

std::string JournalWriter::AttrLine(int op_code, int64_t trial_id, const std::string& key,
                                    const std::string& value_json) const {
  const char* field = op_code == JournalOp::kSetTrialUserAttr ? "user_attr" : "system_attr";
  return absl::StrCat(Begin(op_code), ", \"trial_id\": ", trial_id, ", \"", field, "\": {",
                      JsonString(key), ": ", value_json, "}}\n");
}

absl::Status JournalWriter::Append(const std::string& line, bool sync) {
  if (!broken_.ok()) return broken_;
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const absl::Status error =
          absl::InternalError(absl::StrCat(path_, ": write failed: ", std::strerror(errno)));
      // A partial line: appending more would bury it mid-file. Reopening cuts it away.
      if (written > 0) broken_ = error;
      return error;
    }
    written += static_cast<size_t>(n);
  }
  if (sync && ::fsync(fd_) != 0) {
    broken_ = absl::InternalError(absl::StrCat(path_, ": fsync failed: ", std::strerror(errno)));
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
  absl::MutexLock lock(&mu_);
  if (has_study_) {
    const std::string message =
        absl::StrCat(path_, ": journal already holds study '", study_name_, "'");
    return study_name == study_name_ ? absl::AlreadyExistsError(message)
                                     : absl::FailedPreconditionError(message);
  }
  if (study_name.empty()) return absl::InvalidArgumentError("study name is empty");
  RETURN_IF_ERROR(Append(absl::StrCat(Begin(JournalOp::kCreateStudy), ", \"study_name\": ",
                                      JsonString(study_name), ", \"directions\": [",
                                      maximize ? kDirectionMaximize : kDirectionMinimize, "]}\n"),
                         /*sync=*/true));
  has_study_ = true;
  study_name_ = study_name;
  // Optuna numbers studies 0, 1, ... in creation order (deleted ones included).
  study_id_ = next_study_id_++;
  return absl::OkStatus();
}

absl::Status JournalWriter::SetStudyUserAttr(const std::string& key,
                                             const std::string& json_value) {
  absl::MutexLock lock(&mu_);
  if (!has_study_) return absl::FailedPreconditionError(absl::StrCat(path_, ": no study yet"));
  ASSIGN_OR_RETURN(std::string value, NormalizeJson(json_value));
  return Append(absl::StrCat(Begin(JournalOp::kSetStudyUserAttr), ", \"study_id\": ", study_id_,
                             ", \"user_attr\": {", JsonString(key), ": ", value, "}}\n"),
                /*sync=*/false);
}

absl::Status JournalWriter::CreateTrial(const Trial& trial, const SearchSpace& space) {
  absl::MutexLock lock(&mu_);
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
  lines.push_back(absl::StrCat(Begin(JournalOp::kCreateTrial), ", \"study_id\": ", study_id_,
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
    lines.push_back(absl::StrCat(Begin(JournalOp::kSetTrialParam), ", \"trial_id\": ", trial_id,
                                 ", \"param_name\": ", JsonString(name),
                                 ", \"param_value_internal\": ", internal_text,
                                 ", \"distribution\": ", JsonString(d.ToOptunaJson()), "}\n"));
  }
  const auto user_attr = [&](const std::string& key, const std::string& value_json) {
    lines.push_back(AttrLine(JournalOp::kSetTrialUserAttr, trial_id, key, value_json));
  };
  const auto system_attr = [&](const std::string& key, const std::string& value_json) {
    lines.push_back(AttrLine(JournalOp::kSetTrialSystemAttr, trial_id, key, value_json));
  };
  for (const TrialUserAttr& attr : TrialUserAttrs()) {
    if (attr.written == UserAttrWritten::kAtCreation)
      user_attr(attr.name, UserAttrValue(attr, trial));
  }
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
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckUpdatable(trial_number));
  return Append(absl::StrCat(Begin(JournalOp::kSetTrialIntermediateValue),
                             ", \"trial_id\": ", trial_ids_[trial_number], ", \"step\": ", step,
                             ", \"intermediate_value\": ", JsonFloat(value), "}\n"),
                /*sync=*/false);
}

absl::Status JournalWriter::SetSystemAttr(int64_t trial_number, const std::string& key,
                                          double value) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckUpdatable(trial_number));
  if (key == "failed_trial" || key == "retry_history") {
    return absl::InvalidArgumentError(absl::StrCat(
        "system attr '", key, "' is not a number; CreateTrial writes it from the Trial"));
  }
  return Append(
      AttrLine(JournalOp::kSetTrialSystemAttr, trial_ids_[trial_number], key, JsonFloat(value)),
      /*sync=*/false);
}

absl::Status JournalWriter::SetUserAttr(int64_t trial_number, const std::string& key,
                                        const std::string& json_value) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckUpdatable(trial_number));
  ASSIGN_OR_RETURN(std::string value, NormalizeJson(json_value));
  // The attrs Trial holds must have the types ReadJournal expects, or the journal would not
  // read back.
  ASSIGN_OR_RETURN(const PyJson parsed, ParsePyJson(value));  // parses: it was just normalized
  if (const absl::Status typed = CheckUserAttr(key, parsed); !typed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("trial ", trial_number, ": ", typed.message()));
  }
  return Append(AttrLine(JournalOp::kSetTrialUserAttr, trial_ids_[trial_number], key, value),
                /*sync=*/false);
}

absl::Status JournalWriter::SetUserAttr(const Trial& trial, UserAttrMember member) {
  const TrialUserAttr& attr = UserAttrOf(member);
  return SetUserAttr(trial.number, attr.name, UserAttrValue(attr, trial));
}

absl::Status JournalWriter::Finish(const Trial& trial) {
  absl::MutexLock lock(&mu_);
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
    for (const TrialUserAttr& attr : TrialUserAttrs()) {
      if (attr.written != UserAttrWritten::kAtFailure || !HasUserAttr(attr, trial)) continue;
      RETURN_IF_ERROR(Append(
          AttrLine(JournalOp::kSetTrialUserAttr, trial_id, attr.name, UserAttrValue(attr, trial)),
          /*sync=*/false));
    }
  }
  const std::string complete =
      trial.datetime_complete.empty() ? OptunaDatetimeNow() : trial.datetime_complete;
  RETURN_IF_ERROR(
      Append(absl::StrCat(Begin(JournalOp::kSetTrialStateValues), ", \"trial_id\": ", trial_id,
                          ", \"state\": ", static_cast<int>(trial.state), ", \"values\": ", values,
                          ", \"datetime_complete\": ", JsonString(complete), "}\n"),
             /*sync=*/true));
  finished_[trial.number] = true;
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
