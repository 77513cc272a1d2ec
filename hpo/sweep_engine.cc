#include "hpo/sweep_engine.h"

#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/py_json.h"
#include "common/status_macros.h"
#include "hpo/bounds.h"
#include "hpo/journal/journal_format.h"
#include "hpo/lr_scaling.h"
#include "hpo/program_command.h"
#include "hpo/report/progress_table.h"
#include "hpo/samplers/sampler_registry.h"

namespace tunefleet {
namespace hpo {
namespace {

bool SameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

std::string Int(int64_t v) { return std::to_string(v); }

}  // namespace

SweepEngine::SweepEngine(const SweepConfig& config, JournalWriter* journal)
    : config_(config),
      journal_(journal),
      space_(BuildSearchSpace(config_)),
      sampler_(MakeSampler(config_)),
      pruner_(config_.pruner->MakePruner()) {
  study_.name = config_.name;
  study_.maximize = config_.maximize;
}

SweepEngine::~SweepEngine() = default;

std::map<std::string, std::string> SweepEngine::StudyUserAttrs() const {
  std::map<std::string, std::string> attrs = {
      {"metric", JsonString(config_.metric_name)},
      {"search_method", JsonString(config_.method)},
      {"resource", JsonString("samples")},
      {"pruner", config_.pruner->Json()},
      {"max_concurrent_trials", Int(config_.max_concurrent_trials)}};
  if (config_.trainer.samples_per_epoch > 0) {
    attrs["samples_per_epoch"] = Int(config_.trainer.samples_per_epoch);
  }
  if (config_.trainer.native()) attrs["evals_per_epoch"] = Int(config_.trainer.evals_per_epoch);
  // A program's command, so that `hpo best` can write any trial's (hpo/program_command.h).
  if (config_.trainer.program) {
    attrs["program"] = ProgramStudyAttr(config_.trainer.program_spec, config_.gpus_per_trial);
  }
  return attrs;
}

absl::Status SweepEngine::CreateStudy() {
  recorded_attrs_ = StudyUserAttrs();
  if (journal_ == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(journal_->CreateStudy(config_.name, config_.maximize));
  for (const auto& [key, raw] : recorded_attrs_) {
    RETURN_IF_ERROR(journal_->SetStudyUserAttr(key, raw));
  }
  return absl::OkStatus();
}

absl::StatusOr<SweepEngine::Resumed> SweepEngine::Resume(JournalContents contents) {
  Resumed r;
  // The search space the journal's trials were run with, against this sweep's.
  std::set<std::string> changed, recorded;
  for (const SearchSpace& trial_space : contents.distributions) {
    for (const auto& [name, d] : trial_space) {
      recorded.insert(name);
      auto now = space_.find(name);
      if (now == space_.end() || now->second.ToOptunaJson() != d.ToOptunaJson()) {
        changed.insert(name);
      }
    }
  }
  if (!recorded.empty()) {
    for (const auto& [name, d] : space_) {
      if (recorded.count(name) == 0) changed.insert(name);  // added since
    }
  }
  r.changed_params.assign(changed.begin(), changed.end());
  recorded_attrs_ = std::move(contents.study_user_attrs);
  // The climb fills its rounds to the sweep's first max_concurrent_trials (FillSeats,
  // hpo/samplers/random_then_grid_sampler.h): a sweep resumed with another replays the rounds
  // it planned at the width its journal recorded, and runs at its own.
  if (const auto width = recorded_attrs_.find("max_concurrent_trials");
      width != recorded_attrs_.end()) {
    SearchSettings planned = config_;
    if (absl::SimpleAtoi(width->second, &planned.max_concurrent_trials) &&
        planned.max_concurrent_trials >= 1 &&
        planned.max_concurrent_trials != config_.max_concurrent_trials) {
      sampler_ = MakeSampler(planned);
    }
  }
  distributions_ = std::move(contents.distributions);
  distributions_.resize(contents.study.trials.size());
  study_ = std::move(contents.study);
  study_.name = config_.name;
  study_.maximize = config_.maximize;
  for (Trial& t : study_.trials) {
    if (t.state != TrialState::kRunning && t.state != TrialState::kWaiting) continue;
    t.fail_reason = "interrupted";
    RETURN_IF_ERROR(Finish(t, TrialState::kFail));
    ++r.interrupted;
  }
  // Points left unsettled by failures get their next attempt (the latest attempt is retried).
  std::map<int64_t, int64_t> latest;  // point -> latest trial number
  for (const Trial& t : study_.trials) latest[t.point] = t.number;
  for (const auto& [point, number] : latest) {
    if (point >= 0 && !sampler_->Settled(study_, point)) retries_.push_back(number);
  }
  r.to_rerun = static_cast<int64_t>(retries_.size());
  return r;
}

absl::StatusOr<std::optional<int64_t>> SweepEngine::StartTrial() {
  std::optional<int64_t> retry_of;
  if (!retries_.empty()) {
    retry_of = retries_.front();
    retries_.pop_front();
  } else if (sampler_->NextAvailability(study_) != Availability::kReady) {
    return std::optional<int64_t>();
  }
  Trial t;
  t.number = static_cast<int64_t>(study_.trials.size());
  t.state = TrialState::kRunning;
  t.datetime_start = OptunaDatetimeNow();
  if (retry_of.has_value()) {
    const Trial& failed = study_.trials[static_cast<size_t>(*retry_of)];
    t.params = failed.params;
    t.point = failed.point;
    t.phase = failed.phase;
    t.lr_effective = failed.lr_effective;
    t.failed_trial = failed.failed_trial.value_or(failed.number);
    t.retry_history = failed.retry_history;
    t.retry_history.push_back(failed.number);
  } else {
    SampleTrial(*sampler_, study_, &t, space_);
    t.lr_effective = EffectiveLr(config_, t.params);
  }
  study_.trials.push_back(t);
  if (journal_ != nullptr) RETURN_IF_ERROR(journal_->CreateTrial(t, space_));
  SearchSpace& recorded = distributions_.emplace_back();  // as the journal records them
  for (const auto& [name, value] : t.params) {
    if (auto d = space_.find(name); d != space_.end()) recorded.emplace(name, d->second);
  }
  running_[t.number] = RunState{};
  return std::optional<int64_t>(t.number);
}

absl::StatusOr<std::vector<int64_t>> SweepEngine::Fill() {
  std::vector<int64_t> started;
  while (static_cast<int64_t>(running_.size()) < config_.max_concurrent_trials) {
    ASSIGN_OR_RETURN(std::optional<int64_t> number, StartTrial());
    if (!number.has_value()) break;
    started.push_back(*number);
  }
  return started;
}

bool SweepEngine::Done() {
  return running_.empty() && retries_.empty() &&
         sampler_->NextAvailability(study_) == Availability::kExhausted;
}

bool SweepEngine::Stuck() {
  return running_.empty() && retries_.empty() &&
         sampler_->NextAvailability(study_) == Availability::kWait;
}

absl::StatusOr<bool> SweepEngine::Report(int64_t number, int64_t samples, double value,
                                         bool final) {
  auto it = running_.find(number);
  if (it == running_.end()) return false;
  RunState& run = it->second;
  if (final) run.final_value = value;
  if (run.stop_decided) return false;
  Trial& t = study_.trials[static_cast<size_t>(number)];
  // Like Optuna's trial.report(), a step reported twice keeps its first value.
  if (!t.intermediate_values.emplace(samples, value).second) return false;
  if (journal_ != nullptr) RETURN_IF_ERROR(journal_->SetIntermediateValue(number, samples, value));
  const std::map<std::string, double> before = t.system_attrs;
  const bool prune = pruner_->Prune(&study_, static_cast<size_t>(number));
  if (journal_ != nullptr) {
    for (const auto& [key, v] : study_.trials[static_cast<size_t>(number)].system_attrs) {
      auto b = before.find(key);
      if (b == before.end() || !SameValue(b->second, v)) {
        RETURN_IF_ERROR(journal_->SetSystemAttr(number, key, v));
      }
    }
  }
  if (final) return false;  // it trained to the end: it completes
  if (prune) run.stop_decided = true;
  return prune;
}

absl::Status SweepEngine::Finish(Trial& t, TrialState state) {
  t.state = state;
  t.datetime_complete = OptunaDatetimeNow();
  if (state == TrialState::kPruned) {
    // Optuna records a pruned trial's last intermediate value as its value (when feasible).
    t.value.reset();
    if (!t.intermediate_values.empty() && std::isfinite(t.intermediate_values.rbegin()->second)) {
      t.value = t.intermediate_values.rbegin()->second;
    }
  }
  if (state == TrialState::kFail) t.value.reset();
  if (journal_ != nullptr) RETURN_IF_ERROR(journal_->Finish(t));
  sampler_->AfterTrial(study_, t);
  return absl::OkStatus();
}

absl::StatusOr<SweepEngine::Ended> SweepEngine::EndTrial(int64_t number, RunEnd end,
                                                         const std::string& reason,
                                                         const std::string& stderr_tail,
                                                         bool interrupting) {
  auto it = running_.find(number);
  if (it == running_.end()) return Ended{};
  const RunState run = it->second;
  running_.erase(it);
  Trial& t = study_.trials[static_cast<size_t>(number)];
  TrialState state = TrialState::kFail;
  switch (end) {
    case RunEnd::kCompleted: {
      std::optional<double> value = run.final_value;
      if (!value.has_value() && !t.intermediate_values.empty()) {
        value = t.intermediate_values.rbegin()->second;
      }
      if (run.stop_decided) {
        state = TrialState::kPruned;
      } else if (value.has_value()) {
        state = TrialState::kComplete;
        t.value = value;
      } else {
        t.fail_reason = absl::StrCat("finished without reporting ", config_.metric_name);
      }
      break;
    }
    case RunEnd::kStopped:
      state = TrialState::kPruned;
      break;
    case RunEnd::kCancelled:
      if (run.stop_decided) {
        state = TrialState::kPruned;
      } else {
        t.fail_reason = interrupting ? "interrupted" : absl::StrCat("cancelled: ", reason);
      }
      break;
    case RunEnd::kFailed:
    case RunEnd::kRefused:
      if (run.stop_decided) {
        state = TrialState::kPruned;  // told to stop, then crashed: the decision stands
      } else {
        t.fail_reason = reason.empty() ? "failed" : reason;
        t.stderr_tail = stderr_tail;
      }
      break;
  }
  RETURN_IF_ERROR(Finish(t, state));
  Ended ended;
  ended.trial = &t;
  if (state == TrialState::kFail && !interrupting &&
      !absl::StartsWith(t.fail_reason, "interrupted")) {
    if (end == RunEnd::kRefused) {
      ended.refused = true;
      refused_points_.insert(t.point);
    } else if (!sampler_->Settled(study_, t.point)) {
      retries_.push_back(t.number);
      ended.retried = true;
    } else {
      ended.gave_up = true;
    }
  }
  return ended;
}

absl::Status SweepEngine::InterruptRunning(const std::string& reason) {
  for (const auto& [number, run] : running_) {
    Trial& t = study_.trials[static_cast<size_t>(number)];
    t.fail_reason = reason;
    RETURN_IF_ERROR(Finish(t, TrialState::kFail));
  }
  running_.clear();
  return absl::OkStatus();
}

JournalContents SweepEngine::Snapshot() const {
  JournalContents c;
  c.study_name = config_.name;
  c.maximize = config_.maximize;
  c.study = study_;
  c.study_user_attrs = recorded_attrs_;
  c.distributions = distributions_;
  return c;
}

int64_t SweepEngine::Attempt(int64_t number) const {
  if (number < 0 || static_cast<size_t>(number) >= study_.trials.size()) return 1;
  const int64_t point = study_.trials[static_cast<size_t>(number)].point;
  int64_t attempt = 1;
  for (const Trial& t : study_.trials) {
    if (t.number < number && t.point == point && CountsAsFailedAttempt(t)) ++attempt;
  }
  return attempt;
}

std::string SweepEngine::RetryLine(int64_t number) const {
  if (number < 0 || static_cast<size_t>(number) >= study_.trials.size()) return "";
  const Trial& t = study_.trials[static_cast<size_t>(number)];
  if (t.retry_history.empty()) return "";
  return absl::StrCat("trial ", t.number, " retries trial ", t.retry_history.back(), " (attempt ",
                      Attempt(number), " of ", config_.max_failures_per_trial + 1, ")\n");
}

SweepEngine::Outcome SweepEngine::GetOutcome() const {
  Outcome o;
  std::set<int64_t> points, finished;
  for (const Trial& t : study_.trials) {
    if (t.point >= 0) points.insert(t.point);
    if (t.state == TrialState::kComplete) ++o.completed;
    if (t.state == TrialState::kComplete || t.state == TrialState::kPruned) {
      finished.insert(t.point);
    }
  }
  o.points = static_cast<int64_t>(points.size());
  for (int64_t point : points) {
    // Settled without finishing (it failed more often than it may), or refused (a failure a
    // retry cannot help).
    if (finished.count(point) == 0 &&
        (refused_points_.count(point) > 0 || sampler_->Settled(study_, point))) {
      ++o.failed_points;
    }
  }
  return o;
}

std::optional<std::string> SweepFailure(const SweepEngine::Outcome& o, double max_failed_share) {
  if (o.completed == 0) return std::string("no trial completed");
  if (o.points > 0 &&
      static_cast<double>(o.failed_points) > max_failed_share * static_cast<double>(o.points)) {
    return absl::StrFormat(
        "%d of %d points (%d%%) failed after their retries, more than --max_failed_share %g",
        o.failed_points, o.points,
        static_cast<int>(100.0 * static_cast<double>(o.failed_points) /
                         static_cast<double>(o.points)),
        max_failed_share);
  }
  return std::nullopt;
}

absl::Status SweepEngine::SetPlacement(int64_t number, const std::string& placement) {
  if (!IsRunning(number)) return absl::OkStatus();
  Trial& t = study_.trials[static_cast<size_t>(number)];
  t.placement = placement;
  const bool first = t.ranks_started.empty();
  if (first) t.ranks_started = OptunaDatetimeNow();
  if (journal_ == nullptr) return absl::OkStatus();
  if (first) RETURN_IF_ERROR(journal_->SetUserAttr(t, &Trial::ranks_started));
  return journal_->SetUserAttr(t, &Trial::placement);
}

absl::Status SweepEngine::SetGpuUsage(int64_t number, double util_mean, double mem_peak_mib,
                                      double energy_j) {
  if (!IsRunning(number)) return absl::OkStatus();
  Trial& t = study_.trials[static_cast<size_t>(number)];
  t.gpu_util_mean = util_mean;
  t.gpu_mem_peak_mib = mem_peak_mib;
  t.gpu_energy_j = energy_j;
  if (journal_ == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(journal_->SetUserAttr(t, &Trial::gpu_util_mean));
  RETURN_IF_ERROR(journal_->SetUserAttr(t, &Trial::gpu_mem_peak_mib));
  return journal_->SetUserAttr(t, &Trial::gpu_energy_j);
}

absl::Status SweepEngine::SetWorker(int64_t number, const std::string& worker) {
  if (!IsRunning(number)) return absl::OkStatus();
  Trial& t = study_.trials[static_cast<size_t>(number)];
  if (t.worker == worker) return absl::OkStatus();  // a Started seen again after a head restart
  t.worker = worker;
  if (journal_ == nullptr) return absl::OkStatus();
  return journal_->SetUserAttr(t, &Trial::worker);
}

absl::Status SweepEngine::SetRequeuedAlone(int64_t number) {
  if (!IsRunning(number)) return absl::OkStatus();
  Trial& t = study_.trials[static_cast<size_t>(number)];
  t.requeued_alone = true;
  if (journal_ == nullptr) return absl::OkStatus();
  return journal_->SetUserAttr(t, &Trial::requeued_alone);
}

std::vector<int64_t> SweepEngine::Running() const {
  std::vector<int64_t> out;
  for (const auto& [number, run] : running_) out.push_back(number);
  return out;
}

bool SweepEngine::StopDecided(int64_t number) const {
  auto it = running_.find(number);
  return it != running_.end() && it->second.stop_decided;
}

const Trial* SweepEngine::Best() const { return ProgressTable::Best(study_); }

absl::StatusOr<std::vector<std::string>> SweepEngine::RecordBounds() {
  const Trial* best = Best();
  if (best == nullptr) return std::vector<std::string>();
  const std::vector<BoundHit> hits = BestAtBounds(space_, best->params);
  std::vector<std::string> lines, fields;
  for (const BoundHit& h : hits) {
    lines.push_back(h.message);
    fields.push_back(
        absl::StrCat(JsonString(h.param), ": ", JsonString(h.upper ? "upper" : "lower")));
  }
  const std::string value = absl::StrCat("{", absl::StrJoin(fields, ", "), "}");
  recorded_attrs_["best_at_bound"] = value;
  if (journal_ != nullptr) RETURN_IF_ERROR(journal_->SetStudyUserAttr("best_at_bound", value));
  return lines;
}

}  // namespace hpo
}  // namespace tunefleet
