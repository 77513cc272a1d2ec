#include "tests/hpo/journal_fixture.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/file_util.h"
#include "gtest/gtest.h"
#include "tests/hpo/hpo_test_util.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace hpo {
namespace {

// NaN-aware equality.
bool Same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Writes `t` as the driver would: CreateTrial (params, user attrs, retry links), its
// intermediate values, its numeric system attrs, then Finish unless it is RUNNING.
void Record(JournalWriter* w, const SearchSpace& space, const Trial& t,
            std::vector<Trial>* trials) {
  Trial created = t;
  created.system_attrs.clear();
  EXPECT_TRUE(w->CreateTrial(created, space).ok());
  for (const auto& [s, v] : t.intermediate_values) {
    EXPECT_TRUE(w->SetIntermediateValue(t.number, s, v).ok());
  }
  for (const auto& [key, v] : t.system_attrs) {
    EXPECT_TRUE(w->SetSystemAttr(t.number, key, v).ok());
  }
  if (t.state != TrialState::kRunning) {
    EXPECT_TRUE(w->Finish(t).ok());
  }
  trials->push_back(t);
}

}  // namespace

std::string TestDir(const std::string& name) {
  const std::string dir = TestTempPath("journal_test_" + name);
  if (absl::Status s = RemoveTree(dir); !s.ok()) ADD_FAILURE() << s;
  return dir;
}

std::string NewJournalPath(const std::string& name) {
  return FreshTestDir("journal_test_" + name) + "/journal.log";
}

std::string FileText(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  return text.ok() ? *text : "";
}

void AppendRaw(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

SearchSpace Space() { return LrBatchSpace({16, 32, 64}); }

Trial MakeTrial(int64_t number, double lr, double batch, const std::string& phase, int64_t point) {
  Trial t;
  t.number = number;
  t.params = {{kLrParam, lr}, {kBatchParam, batch}};
  t.lr_effective = lr * batch / 32;
  t.phase = phase;
  t.point = point;
  t.datetime_start = "2024-05-01T13:04:0" + std::to_string(number % 10) + ".123456";
  return t;
}

void ExpectSameTrial(const Trial& want, const Trial& got) {
  SCOPED_TRACE("trial " + std::to_string(want.number));
  EXPECT_EQ(got.number, want.number);
  EXPECT_EQ(got.state, want.state);
  EXPECT_EQ(got.params, want.params);
  ASSERT_EQ(got.intermediate_values.size(), want.intermediate_values.size());
  for (const auto& [step, v] : want.intermediate_values) {
    ASSERT_TRUE(got.intermediate_values.count(step)) << step;
    EXPECT_TRUE(Same(got.intermediate_values.at(step), v)) << step;
  }
  EXPECT_EQ(got.value.has_value(), want.value.has_value());
  if (got.value && want.value) {
    EXPECT_TRUE(Same(*got.value, *want.value));
  }
  EXPECT_EQ(got.system_attrs, want.system_attrs);
  EXPECT_EQ(got.failed_trial, want.failed_trial);
  EXPECT_EQ(got.retry_history, want.retry_history);
  EXPECT_EQ(got.lr_effective, want.lr_effective);
  EXPECT_EQ(got.phase, want.phase);
  EXPECT_EQ(got.point, want.point);
  EXPECT_EQ(got.fail_reason, want.fail_reason);
  EXPECT_EQ(got.stderr_tail, want.stderr_tail);
  EXPECT_EQ(got.datetime_start, want.datetime_start);
  EXPECT_EQ(got.datetime_complete, want.datetime_complete);
}

std::vector<Trial> WriteStudy(JournalWriter* w, const SearchSpace& space) {
  std::vector<Trial> trials;
  EXPECT_TRUE(w->CreateStudy("sbert-stsb-lr", /*maximize=*/true).ok());
  EXPECT_TRUE(
      w->SetStudyUserAttr("sweep", R"({"name": "lr", "lr": [1e-05, NaN, -Infinity]})").ok());

  Trial t0 = MakeTrial(0, 1e-4, 32, "random", 0);
  t0.intermediate_values = {{10, 0.5}, {20, 0.61}};
  t0.state = TrialState::kComplete;
  t0.value = 0.625;
  t0.datetime_complete = "2024-05-01T14:00:00.000001";
  Record(w, space, t0, &trials);

  Trial t1 = MakeTrial(1, 2.5e-5, 16, "random", 1);
  t1.intermediate_values = {{10, kNaN}, {20, kInf}, {30, -kInf}};
  t1.system_attrs["completed_rung_0"] = 0.25;
  t1.state = TrialState::kPruned;
  t1.datetime_complete = "2024-05-01T14:00:01.000000";
  Record(w, space, t1, &trials);

  Trial t2 = MakeTrial(2, 1e-3, 64, "random", 2);
  t2.state = TrialState::kFail;
  t2.fail_reason = "exit code 1";
  t2.stderr_tail = "Traceback:\n  \"x\"\tRuntimeError: CUDA OOM \xe2\x98\x83 \xf0\x9f\x94\xa5\\";
  t2.datetime_complete = "2024-05-01T14:00:02.000000";
  Record(w, space, t2, &trials);

  Trial t3 = MakeTrial(3, 1e-3, 64, "random", 2);
  t3.failed_trial = 2;
  t3.retry_history = {2};
  t3.state = TrialState::kFail;
  t3.fail_reason = "killed by signal 9";
  t3.datetime_complete = "2024-05-01T14:00:03.000000";
  Record(w, space, t3, &trials);

  Trial t4 = MakeTrial(4, 1e-3, 64, "grid", 2);
  t4.failed_trial = 2;
  t4.retry_history = {2, 3};
  t4.intermediate_values = {{1, 0.7}};
  t4.state = TrialState::kComplete;
  t4.value = 0.7;
  t4.datetime_complete = "2024-05-01T14:00:04.000000";
  Record(w, space, t4, &trials);

  Trial t5 = MakeTrial(5, 3.0e-4, 16, "grid", 3);
  t5.intermediate_values = {{5, -kInf}};
  Record(w, space, t5, &trials);  // RUNNING
  return trials;
}

}  // namespace hpo
}  // namespace tunefleet
