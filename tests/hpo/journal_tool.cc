// Writes and reads study journals for journal_optuna_test, which checks that Optuna 3.1 reads
// them as hpo does.
//
//   journal_tool write PATH    writes a fixed representative study (maximize; every state
//                              the driver produces, retries, NaN / Infinity intermediate
//                              values, placements, warm workers) and prints hpo's view of it
//                              (ReadJournal) as JSON
//   journal_tool read PATH     prints hpo's view of any journal
//   journal_tool resume PATH   reopens the journal as a resumed sweep does (cutting a torn
//                              tail), ends the RUNNING trials as FAIL "interrupted", prints
//                              the view; the bytes cut go to stderr
//
// The study's params: lr, batch_size, and trainer keys of each other distribution (int,
// categorical of strings, uniform float): MixedSpace (tests/hpo/hpo_test_util.h).
// The view: {"study_name", "direction", "user_attrs", "trials": [{"number", "state", "params",
// "distributions": {name: Optuna distribution JSON (a string)}, "value", "intermediate_values":
// {"step": v}, "user_attrs", "system_attrs", "datetime_start", "datetime_complete"}]},
// floats as Python writes them (NaN, Infinity), so that journal_optuna_check.py can compare it
// with what Optuna reads.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/journal/journal_writer.h"
#include "hpo/journal/study_json.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

absl::Status PrintView(const std::string& path) {
  ASSIGN_OR_RETURN(JournalContents contents, ReadJournal(path));
  std::cout << JournalToJson(contents);
  return absl::OkStatus();
}

struct Spec {
  double lr;
  int batch;
  const char* phase;
  int64_t point;
  TrialState state;
  std::vector<std::pair<int64_t, double>> intermediate;
  double value;  // COMPLETE only
  const char* fail_reason;
  const char* stderr_tail;
  std::optional<int64_t> failed_trial;
  std::vector<int64_t> retry_history;
};

absl::Status Write(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<JournalWriter> w, JournalWriter::Open(path));
  RETURN_IF_ERROR(w->CreateStudy("sbert-stsb-lr", /*maximize=*/true));
  RETURN_IF_ERROR(w->SetStudyUserAttr(
      "sweep", R"({"name": "sbert-stsb-lr", "metric": "eval/spearman", )"
               R"("batch_sizes": [16, 32, 64, 128], "lr": {"min": 1e-05, "max": 0.001}})"));
  RETURN_IF_ERROR(w->SetStudyUserAttr("seed", "42"));
  using S = TrialState;
  const std::vector<Spec> specs = {
      {1e-4, 32, "random", 0, S::kComplete, {{100, 0.71}, {200, 0.752}}, 0.7605, "", "", {}, {}},
      {3.1622776601683795e-5,
       16,
       "random",
       1,
       S::kComplete,
       {{100, kNaN}, {200, 0.79}},
       0.8,
       "",
       "",
       {},
       {}},
      {1e-5, 64, "random", 2, S::kPruned, {{100, 0.2}}, 0, "", "", {}, {}},
      {5e-4,
       128,
       "random",
       3,
       S::kFail,
       {{100, kInf}},
       0,
       "exit code 1",
       "Traceback (most recent call last):\n  File \"train.py\", line 3\n"
       "RuntimeError: CUDA out of memory \xe2\x98\x83\t\\done",
       {},
       {}},
      {5e-4, 128, "random", 3, S::kFail, {}, 0, "killed by signal 9", "", 3, {3}},
      {5e-4, 128, "random", 3, S::kComplete, {{100, 0.81}, {200, 0.82}}, 0.8215, "", "", 3, {3, 4}},
      {2e-4, 32, "grid", 4, S::kComplete, {{100, -kInf}, {200, 0.6}}, 0.6, "", "", {}, {}},
      {1e-3, 64, "grid", 5, S::kPruned, {{100, kNaN}}, 0, "", "", {}, {}},
      {6.324555320336759e-5, 16, "grid", 6, S::kFail, {}, 0, "interrupted", "", {}, {}},
      {1e-3, 128, "grid", 7, S::kRunning, {{100, 0.5}}, 0, "", "", {}, {}},
  };
  for (size_t i = 0; i < specs.size(); ++i) {
    const Spec& s = specs[i];
    Trial t;
    t.number = static_cast<int64_t>(i);
    t.params = {{kLrParam, s.lr},
                {kBatchParam, s.batch},
                {"train.epochs", static_cast<double>(1 + i % 3)},
                {"model.pooling", static_cast<double>(i % 3)},
                {"train.weight_decay", 0.01 * static_cast<double>(i)}};
    t.lr_effective = s.lr * s.batch / 32;
    t.phase = s.phase;
    t.point = s.point;
    t.failed_trial = s.failed_trial;
    t.retry_history = s.retry_history;
    if (i % 2 == 0) t.datetime_start = absl::StrCat("2024-05-01T13:0", i, ":05.000123");
    RETURN_IF_ERROR(w->CreateTrial(t, MixedSpace()));
    // As the driver records a Started: every trial's placement, and the warm worker of those
    // that ran in one (trial 0 and the RUNNING trial 9; the others ran in fresh processes).
    RETURN_IF_ERROR(w->SetUserAttr(t.number, "placement", "\"local:0\""));
    if (i == 0 || s.state == S::kRunning) {
      RETURN_IF_ERROR(
          w->SetUserAttr(t.number, "worker", absl::StrCat("\"local/slot-0/w-4242#", i + 1, "\"")));
    }
    for (const auto& [step, v] : s.intermediate) {
      RETURN_IF_ERROR(w->SetIntermediateValue(t.number, step, v));
      if (s.state == S::kPruned) {
        // As successive halving records a rung.
        RETURN_IF_ERROR(
            w->SetSystemAttr(t.number, absl::StrCat("completed_rung_", step / 100 - 1), v));
      }
    }
    if (s.state == S::kRunning) continue;
    t.state = s.state;
    if (s.state == S::kComplete) t.value = s.value;
    t.fail_reason = s.fail_reason;
    t.stderr_tail = s.stderr_tail;
    RETURN_IF_ERROR(w->Finish(t));
  }
  w.reset();
  return PrintView(path);
}

absl::Status Resume(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<JournalWriter> w, JournalWriter::Open(path));
  std::cerr << "dropped_bytes=" << w->dropped_bytes() << "\n";
  ASSIGN_OR_RETURN(JournalContents contents, ReadJournal(path));
  for (Trial t : contents.study.trials) {
    if (t.state != TrialState::kRunning) continue;
    t.state = TrialState::kFail;
    t.fail_reason = "interrupted";
    t.datetime_complete.clear();
    RETURN_IF_ERROR(w->Finish(t));
  }
  w.reset();
  return PrintView(path);
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "Usage: journal_tool write|read|resume PATH\n";
    return 2;
  }
  const std::string command = argv[1], path = argv[2];
  absl::Status status;
  if (command == "write") {
    status = Write(path);
  } else if (command == "read") {
    status = PrintView(path);
  } else if (command == "resume") {
    status = Resume(path);
  } else {
    std::cerr << "journal_tool: error: unknown command '" << command << "'\n";
    return 2;
  }
  if (!status.ok()) {
    std::cerr << "journal_tool: error: " << status.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet

int main(int argc, char** argv) { return tunefleet::hpo::Main(argc, argv); }
