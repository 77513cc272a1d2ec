#include "hpo/journal.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir = std::filesystem::path(tmp ? tmp : "/tmp") / ("journal_test_" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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

SearchSpace Space() {
  SearchSpace space;
  Distribution lr;
  lr.kind = Distribution::Kind::kFloat;
  lr.low = 1e-5;
  lr.high = 1e-3;
  lr.log = true;
  space[kLrParam] = lr;
  Distribution batch;
  batch.kind = Distribution::Kind::kCategorical;
  batch.integer_choices = true;
  batch.choices = {16, 32, 64};
  space[kBatchParam] = batch;
  return space;
}

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

// NaN-aware equality.
bool Same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

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

// A study with every state, retries, non-finite intermediate values; returns the trials as
// written (finished ones with their final state).
std::vector<Trial> WriteStudy(JournalWriter* w, const SearchSpace& space) {
  std::vector<Trial> trials;
  EXPECT_TRUE(w->CreateStudy("sbert-stsb-lr", /*maximize=*/true).ok());
  EXPECT_TRUE(
      w->SetStudyUserAttr("sweep", R"({"name": "lr", "lr": [1e-05, NaN, -Infinity]})").ok());

  Trial t0 = MakeTrial(0, 1e-4, 32, "random", 0);
  EXPECT_TRUE(w->CreateTrial(t0, space).ok());
  t0.intermediate_values = {{10, 0.5}, {20, 0.61}};
  for (const auto& [s, v] : t0.intermediate_values) {
    EXPECT_TRUE(w->SetIntermediateValue(0, s, v).ok());
  }
  t0.state = TrialState::kComplete;
  t0.value = 0.625;
  t0.datetime_complete = "2024-05-01T14:00:00.000001";
  EXPECT_TRUE(w->Finish(t0).ok());
  trials.push_back(t0);

  Trial t1 = MakeTrial(1, 2.5e-5, 16, "random", 1);
  EXPECT_TRUE(w->CreateTrial(t1, space).ok());
  t1.intermediate_values = {{10, kNaN}, {20, kInf}, {30, -kInf}};
  for (const auto& [s, v] : t1.intermediate_values) {
    EXPECT_TRUE(w->SetIntermediateValue(1, s, v).ok());
  }
  EXPECT_TRUE(w->SetSystemAttr(1, "completed_rung_0", 0.25).ok());
  t1.system_attrs["completed_rung_0"] = 0.25;
  t1.state = TrialState::kPruned;
  t1.datetime_complete = "2024-05-01T14:00:01.000000";
  EXPECT_TRUE(w->Finish(t1).ok());
  trials.push_back(t1);

  Trial t2 = MakeTrial(2, 1e-3, 64, "random", 2);
  EXPECT_TRUE(w->CreateTrial(t2, space).ok());
  t2.state = TrialState::kFail;
  t2.fail_reason = "exit code 1";
  t2.stderr_tail = "Traceback:\n  \"x\"\tRuntimeError: CUDA OOM \xe2\x98\x83 \xf0\x9f\x94\xa5\\";
  t2.datetime_complete = "2024-05-01T14:00:02.000000";
  EXPECT_TRUE(w->Finish(t2).ok());
  trials.push_back(t2);

  Trial t3 = MakeTrial(3, 1e-3, 64, "random", 2);
  t3.failed_trial = 2;
  t3.retry_history = {2};
  EXPECT_TRUE(w->CreateTrial(t3, space).ok());
  t3.state = TrialState::kFail;
  t3.fail_reason = "killed by signal 9";
  t3.datetime_complete = "2024-05-01T14:00:03.000000";
  EXPECT_TRUE(w->Finish(t3).ok());
  trials.push_back(t3);

  Trial t4 = MakeTrial(4, 1e-3, 64, "grid", 2);
  t4.failed_trial = 2;
  t4.retry_history = {2, 3};
  EXPECT_TRUE(w->CreateTrial(t4, space).ok());
  t4.intermediate_values = {{1, 0.7}};
  EXPECT_TRUE(w->SetIntermediateValue(4, 1, 0.7).ok());
  t4.state = TrialState::kComplete;
  t4.value = 0.7;
  t4.datetime_complete = "2024-05-01T14:00:04.000000";
  EXPECT_TRUE(w->Finish(t4).ok());
  trials.push_back(t4);

  Trial t5 = MakeTrial(5, 3.0e-4, 16, "grid", 3);
  EXPECT_TRUE(w->CreateTrial(t5, space).ok());
  t5.intermediate_values = {{5, -kInf}};
  EXPECT_TRUE(w->SetIntermediateValue(5, 5, -kInf).ok());
  trials.push_back(t5);  // RUNNING
  return trials;
}

TEST(JournalFormatTest, JsonFloatIsPythonRepr) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {1e15, "1000000000000000.0"},
      {1e16, "1e+16"},
      {0.0001, "0.0001"},
      {0.00001, "1e-05"},
      {100000.0, "100000.0"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {0.1, "0.1"},
      {1.0 / 3, "0.3333333333333333"},
      {2.5e-05, "2.5e-05"},
      {-1.5, "-1.5"},
      {1e22, "1e+22"},
      {9007199254740993.0, "9007199254740992.0"},
      {std::ldexp(1.0, -24), "5.960464477539063e-08"},  // power of two: the neighbour digit
      {kNaN, "NaN"},
      {kInf, "Infinity"},
      {-kInf, "-Infinity"},
  };
  for (const auto& [v, want] : cases) EXPECT_EQ(JsonFloat(v), want);
}

TEST(JournalFormatTest, JsonStringIsPythonDumps) {
  EXPECT_EQ(JsonString("a\"b\\c\n\t\r\b\f\x01\x7f/"),
            "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u007f/\"");
  EXPECT_EQ(JsonString("\xc3\xa9\xe2\x98\x83\xf0\x9f\x94\xa5"), "\"\\u00e9\\u2603\\ud83d\\udd25\"");
  EXPECT_EQ(JsonString("bad\xff\xc3"), "\"bad\\ufffd\\ufffd\"");
}

TEST(JournalFormatTest, NormalizeJson) {
  EXPECT_EQ(*NormalizeJson(R"({"b":1,"a":[NaN,-Infinity,Infinity,"NaN",1.50,2e-5],"c":null})"),
            R"({"b": 1, "a": [NaN, -Infinity, Infinity, "NaN", 1.5, 2e-05], "c": null})");
  EXPECT_EQ(*NormalizeJson("\"x\\\"NaN\\\"\""), "\"x\\\"NaN\\\"\"");
  EXPECT_FALSE(NormalizeJson("{\"a\": nan}").ok());
  EXPECT_FALSE(NormalizeJson("{NaN: 1}").ok());
  EXPECT_FALSE(NormalizeJson("[1, 2").ok());
}

TEST(JournalTest, RoundTrip) {
  // An absolute path: its own folder is created (JournalPathTest below has the rule).
  const std::string dir = TestDir("roundtrip");
  std::filesystem::create_directories(dir + "/runs");
  const std::string path = dir + "/runs/sweep/journal.log";
  const SearchSpace space = Space();
  std::vector<Trial> want;
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_EQ((*writer)->dropped_bytes(), 0);
    want = WriteStudy(writer->get(), space);
    EXPECT_EQ((*writer)->next_trial_number(), 6);
  }
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->study_name, "sbert-stsb-lr");
  EXPECT_TRUE(contents->maximize);
  EXPECT_EQ(contents->study.name, "sbert-stsb-lr");
  EXPECT_TRUE(contents->study.maximize);
  EXPECT_EQ(contents->study_user_attrs.at("sweep"),
            R"({"name": "lr", "lr": [1e-05, NaN, -Infinity]})");
  const std::string text = ReadFile(path);
  EXPECT_EQ(contents->operations, static_cast<int64_t>(Lines(text).size()));
  ASSERT_EQ(contents->study.trials.size(), want.size());
  ASSERT_EQ(contents->distributions.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ExpectSameTrial(want[i], contents->study.trials[i]);
    for (const auto& [name, d] : space) {
      EXPECT_EQ(contents->distributions[i].at(name).ToOptunaJson(), d.ToOptunaJson());
    }
  }
  EXPECT_TRUE(contents->study.trials[5].datetime_complete.empty());

  // The exact text Optuna 3.1 writes for these operations.
  const std::string w = "\"worker_id\": \"tunefleet-" + std::to_string(getpid()) + "\"";
  const std::vector<std::string> lines = Lines(text);
  EXPECT_EQ(lines[0], "{\"op_code\": 0, " + w +
                          ", \"study_name\": \"sbert-stsb-lr\", "
                          "\"directions\": [2]}");
  EXPECT_EQ(lines[2], "{\"op_code\": 4, " + w +
                          ", \"study_id\": 0, "
                          "\"datetime_start\": \"2024-05-01T13:04:00.123456\"}");
  EXPECT_EQ(lines[3], "{\"op_code\": 5, " + w +
                          ", \"trial_id\": 0, \"param_name\": "
                          "\"batch_size\", \"param_value_internal\": 1, \"distribution\": "
                          "\"{\\\"name\\\": \\\"CategoricalDistribution\\\", \\\"attributes\\\": "
                          "{\\\"choices\\\": [16, 32, 64]}}\"}");
  EXPECT_EQ(lines[4], "{\"op_code\": 5, " + w +
                          ", \"trial_id\": 0, \"param_name\": \"lr\", "
                          "\"param_value_internal\": 0.0001, \"distribution\": \"{\\\"name\\\": "
                          "\\\"FloatDistribution\\\", \\\"attributes\\\": {\\\"step\\\": null, "
                          "\\\"low\\\": 1e-05, \\\"high\\\": 0.001, \\\"log\\\": true}}\"}");
  EXPECT_EQ(lines[5], "{\"op_code\": 8, " + w +
                          ", \"trial_id\": 0, \"user_attr\": "
                          "{\"lr_effective\": 0.0001}}");
  EXPECT_NE(text.find("{\"op_code\": 6, " + w +
                      ", \"trial_id\": 0, \"state\": 1, \"values\": "
                      "[0.625], \"datetime_complete\": \"2024-05-01T14:00:00.000001\"}\n"),
            std::string::npos);
  EXPECT_NE(text.find("\"trial_id\": 1, \"step\": 10, \"intermediate_value\": NaN}\n"),
            std::string::npos);
  EXPECT_NE(text.find("\"trial_id\": 1, \"state\": 2, \"values\": null, "), std::string::npos);
  EXPECT_NE(text.find("\"system_attr\": {\"retry_history\": [2, 3]}}\n"), std::string::npos);
  EXPECT_NE(text.find("\"stderr_tail\": \"Traceback:\\n  \\\"x\\\"\\tRuntimeError: CUDA OOM "
                      "\\u2603 \\ud83d\\udd25\\\\\"}}\n"),
            std::string::npos);
}

TEST(JournalTest, ReopenContinuesTheStudy) {
  const std::string path = TestDir("reopen") + "/journal.log";
  const SearchSpace space = Space();
  std::vector<Trial> want;
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    want = WriteStudy(writer->get(), space);
  }
  auto writer = JournalWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->next_trial_number(), 6);
  // Only one writer at a time.
  EXPECT_EQ(JournalWriter::Open(path).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*writer)->CreateStudy("sbert-stsb-lr", true).code(), absl::StatusCode::kAlreadyExists);
  // Trial 5 is still RUNNING: it can be finished; finished trials cannot be touched.
  Trial t5 = want[5];
  t5.state = TrialState::kFail;
  t5.fail_reason = "interrupted";
  t5.datetime_complete = "2024-05-01T15:00:00.000000";
  ASSERT_TRUE((*writer)->Finish(t5).ok());
  EXPECT_EQ((*writer)->SetIntermediateValue(0, 99, 1.0).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*writer)->Finish(t5).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*writer)->SetUserAttr(7, "x", "1").code(), absl::StatusCode::kFailedPrecondition);
  Trial t6 = MakeTrial(6, 1e-4, 16, "grid", 4);
  ASSERT_TRUE((*writer)->CreateTrial(t6, space).ok());
  ASSERT_TRUE((*writer)->SetUserAttr(6, "note", R"({"k": [1, 2.0]})").ok());
  writer->reset();

  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->study.trials.size(), 7u);
  ExpectSameTrial(t5, contents->study.trials[5]);
  ExpectSameTrial(t6, contents->study.trials[6]);
}

TEST(JournalTest, WriterRejectsBadInput) {
  const std::string path = TestDir("bad_input") + "/journal.log";
  auto writer = JournalWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  JournalWriter& w = **writer;
  const SearchSpace space = Space();
  EXPECT_EQ(w.CreateTrial(MakeTrial(0, 1e-4, 32, "random", 0), space).code(),
            absl::StatusCode::kFailedPrecondition);  // no study
  ASSERT_TRUE(w.CreateStudy("s", /*maximize=*/false).ok());
  EXPECT_EQ(w.CreateStudy("other", false).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.CreateTrial(MakeTrial(1, 1e-4, 32, "random", 0), space).code(),
            absl::StatusCode::kFailedPrecondition);  // not the next number
  EXPECT_EQ(w.CreateTrial(MakeTrial(0, 1e-4, 48, "random", 0), space).code(),
            absl::StatusCode::kInvalidArgument);  // not a choice
  EXPECT_EQ(w.CreateTrial(MakeTrial(0, 1e-2, 32, "random", 0), space).code(),
            absl::StatusCode::kInvalidArgument);  // outside [low, high]
  Trial bad_date = MakeTrial(0, 1e-4, 32, "random", 0);
  bad_date.datetime_start = "2024-05-01 13:04:05";
  EXPECT_EQ(w.CreateTrial(bad_date, space).code(), absl::StatusCode::kInvalidArgument);
  Trial t = MakeTrial(0, 1e-4, 32, "random", 0);
  t.datetime_start.clear();  // now
  ASSERT_TRUE(w.CreateTrial(t, space).ok());
  EXPECT_EQ(w.SetUserAttr(0, "x", "{oops").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(w.SetUserAttr(0, "point", "\"seven\"").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(w.SetUserAttr(0, "lr_effective", "\"x\"").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(w.SetUserAttr(0, "lr_effective", "NaN").ok());
  EXPECT_TRUE(w.SetUserAttr(0, "lr_effective", "2e-4").ok());
  EXPECT_EQ(w.SetSystemAttr(0, "failed_trial", 1).code(), absl::StatusCode::kInvalidArgument);
  t.state = TrialState::kComplete;
  EXPECT_EQ(w.Finish(t).code(), absl::StatusCode::kInvalidArgument);  // no value
  t.value = kNaN;
  EXPECT_EQ(w.Finish(t).code(), absl::StatusCode::kInvalidArgument);  // Optuna: FAIL
  t.state = TrialState::kRunning;
  EXPECT_EQ(w.Finish(t).code(), absl::StatusCode::kInvalidArgument);
  t.state = TrialState::kComplete;
  t.value = -kInf;
  ASSERT_TRUE(w.Finish(t).ok());
  writer->reset();

  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_FALSE(contents->maximize);
  ASSERT_EQ(contents->study.trials.size(), 1u);
  const Trial& got = contents->study.trials[0];
  EXPECT_EQ(got.value, -kInf);
  EXPECT_EQ(got.lr_effective, 2e-4);
  EXPECT_EQ(got.datetime_start.size(), 26u);  // YYYY-MM-DDTHH:MM:SS.ffffff
  EXPECT_EQ(got.datetime_complete.size(), 26u);
  EXPECT_EQ(got.datetime_start[10], 'T');
}

TEST(JournalTest, TornLastLineIsCutOnReopen) {
  const std::string path = TestDir("torn") + "/journal.log";
  const SearchSpace space = Space();
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->CreateStudy("s", true).ok());
    ASSERT_TRUE((*writer)->CreateTrial(MakeTrial(0, 1e-4, 32, "random", 0), space).ok());
  }
  const std::string clean = ReadFile(path);
  const std::string garbage =
      "{\"op_code\": 7, \"worker_id\": \"tunefleet-1\", \"trial_id\": 0, \"st";
  AppendRaw(path, garbage);

  // Readers ignore the torn last line, as Optuna does.
  auto before = ReadJournal(path);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->study.trials.size(), 1u);

  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_EQ((*writer)->dropped_bytes(), static_cast<int64_t>(garbage.size()));
    EXPECT_EQ(ReadFile(path), clean);
    ASSERT_TRUE((*writer)->SetIntermediateValue(0, 1, 0.5).ok());
    Trial t = MakeTrial(0, 1e-4, 32, "random", 0);
    t.state = TrialState::kComplete;
    t.value = 0.5;
    ASSERT_TRUE((*writer)->Finish(t).ok());
  }
  const std::string text = ReadFile(path);
  EXPECT_EQ(text.find("\"st{"), std::string::npos);
  EXPECT_EQ(text.find(garbage), std::string::npos);
  auto after = ReadJournal(path);
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->study.trials.size(), 1u);
  EXPECT_EQ(after->study.trials[0].state, TrialState::kComplete);
  EXPECT_EQ(after->study.trials[0].intermediate_values.at(1), 0.5);
}

TEST(JournalTest, InvalidTerminatedLastLineIsCut) {
  const std::string path = TestDir("torn_nl") + "/journal.log";
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->CreateStudy("s", true).ok());
  }
  AppendRaw(path, "\x01garbage\n");
  auto writer = JournalWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->dropped_bytes(), 9);
  ASSERT_TRUE((*writer)->CreateTrial(MakeTrial(0, 1e-4, 32, "random", 0), Space()).ok());
  writer->reset();
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->study.trials.size(), 1u);
}

TEST(JournalTest, CompleteUnterminatedLastLineIsKept) {
  // Optuna (and ReadJournal) apply a last line that is complete JSON without '\n', so the
  // writer keeps it and only terminates it.
  const std::string path = TestDir("unterminated") + "/journal.log";
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->CreateStudy("s", true).ok());
    ASSERT_TRUE((*writer)->CreateTrial(MakeTrial(0, 1e-4, 32, "random", 0), Space()).ok());
  }
  AppendRaw(path,
            "{\"op_code\": 7, \"worker_id\": \"w\", \"trial_id\": 0, \"step\": 3, "
            "\"intermediate_value\": 0.25}");
  auto writer = JournalWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->dropped_bytes(), 0);
  ASSERT_TRUE((*writer)->SetIntermediateValue(0, 4, 0.5).ok());
  writer->reset();
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->study.trials[0].intermediate_values,
            (std::map<int64_t, double>{{3, 0.25}, {4, 0.5}}));
}

TEST(JournalTest, CorruptedMiddleLineIsAnError) {
  const std::string path = TestDir("corrupt") + "/journal.log";
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->CreateStudy("s", true).ok());
  }
  AppendRaw(path, "{\"op_code\": 4, \"worker_id\": \"w\", \"stu\n");  // line 2
  AppendRaw(path,
            "{\"op_code\": 4, \"worker_id\": \"w\", \"study_id\": 0, "
            "\"datetime_start\": null}\n");
  auto contents = ReadJournal(path);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(contents.status().message().find(path + ":2: not valid JSON"), std::string::npos)
      << contents.status();
  // The writer refuses to append to it.
  auto writer = JournalWriter::Open(path);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find(path + ":2:"), std::string::npos);
}

TEST(JournalTest, MalformedOperationNamesTheLine) {
  const std::string path = TestDir("malformed") + "/journal.log";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  AppendRaw(path,
            "{\"op_code\": 0, \"worker_id\": \"w\", \"study_name\": \"s\", "
            "\"directions\": [2]}\n"
            "{\"op_code\": 4, \"worker_id\": \"w\", \"study_id\": 0}\n");
  auto contents = ReadJournal(path);
  ASSERT_FALSE(contents.ok());
  EXPECT_NE(contents.status().message().find(path + ":2: missing \"datetime_start\""),
            std::string::npos)
      << contents.status();
}

TEST(JournalTest, OperationsAfterFinishAreIgnored) {
  const std::string path = TestDir("after_finish") + "/journal.log";
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->CreateStudy("s", true).ok());
    Trial t = MakeTrial(0, 1e-4, 32, "random", 0);
    ASSERT_TRUE((*writer)->CreateTrial(t, Space()).ok());
    t.state = TrialState::kPruned;
    ASSERT_TRUE((*writer)->Finish(t).ok());
  }
  // As another process might write them: all ignored by Optuna's replay, as are operations on
  // a trial that does not exist.
  AppendRaw(
      path,
      "{\"op_code\": 7, \"worker_id\": \"w\", \"trial_id\": 0, \"step\": 1, "
      "\"intermediate_value\": 1.0}\n"
      "{\"op_code\": 6, \"worker_id\": \"w\", \"trial_id\": 0, \"state\": 1, \"values\": "
      "[1.0], \"datetime_complete\": \"2024-05-01T14:00:00.000000\"}\n"
      "{\"op_code\": 8, \"worker_id\": \"w\", \"trial_id\": 0, \"user_attr\": "
      "{\"phase\": \"grid\"}}\n"
      "{\"op_code\": 5, \"worker_id\": \"w\", \"trial_id\": 0, \"param_name\": \"lr\", "
      "\"param_value_internal\": 0.0005, \"distribution\": \"{}\"}\n"
      "{\"op_code\": 9, \"worker_id\": \"w\", \"trial_id\": 7, \"system_attr\": {\"a\": 1}}\n");
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  const Trial& t = contents->study.trials.at(0);
  EXPECT_EQ(t.state, TrialState::kPruned);
  EXPECT_FALSE(t.value.has_value());
  EXPECT_TRUE(t.intermediate_values.empty());
  EXPECT_EQ(t.phase, "random");
  EXPECT_EQ(t.params.at(kLrParam), 1e-4);
  EXPECT_EQ(contents->operations, static_cast<int64_t>(Lines(ReadFile(path)).size()));
}

TEST(JournalTest, IncompatibleDistributionIsIgnored) {
  // Optuna drops a SET_TRIAL_PARAM whose categorical choices differ from an earlier trial's.
  const std::string path = TestDir("incompatible") + "/journal.log";
  SearchSpace space = Space();
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->CreateStudy("s", true).ok());
    ASSERT_TRUE((*writer)->CreateTrial(MakeTrial(0, 1e-4, 32, "random", 0), space).ok());
    space[kBatchParam].choices = {32, 128};
    space[kLrParam].low = 1e-6;  // float bounds may change, log may not
    ASSERT_TRUE((*writer)->CreateTrial(MakeTrial(1, 1e-4, 128, "random", 1), space).ok());
  }
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  const Trial& t1 = contents->study.trials.at(1);
  EXPECT_EQ(t1.params.count(kBatchParam), 0u);
  EXPECT_EQ(t1.params.at(kLrParam), 1e-4);
  EXPECT_EQ(contents->distributions[1].at(kLrParam).low, 1e-6);
}

TEST(JournalTest, CategoricalLr) {
  const std::string path = TestDir("categorical_lr") + "/journal.log";
  SearchSpace space = Space();
  space[kLrParam] = Distribution();
  space[kLrParam].kind = Distribution::Kind::kCategorical;
  space[kLrParam].choices = {1e-5, 3e-5, 1e-4};
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->CreateStudy("s", false).ok());
    ASSERT_TRUE((*writer)->CreateTrial(MakeTrial(0, 3e-5, 64, "random", 0), space).ok());
  }
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->study.trials[0].params.at(kLrParam), 3e-5);
  EXPECT_EQ(contents->study.trials[0].params.at(kBatchParam), 64);
  const Distribution& lr = contents->distributions[0].at(kLrParam);
  EXPECT_FALSE(lr.integer_choices);
  EXPECT_EQ(lr.ToOptunaJson(), space[kLrParam].ToOptunaJson());
  EXPECT_TRUE(contents->distributions[0].at(kBatchParam).integer_choices);
}

TEST(JournalTest, EmptyAndMissingFiles) {
  const std::string dir = TestDir("empty");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/journal.log";
  AppendRaw(path, "");
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->study_name, "");
  EXPECT_EQ(contents->operations, 0);
  EXPECT_TRUE(contents->study.trials.empty());

  auto writer = JournalWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->dropped_bytes(), 0);
  EXPECT_EQ((*writer)->next_trial_number(), 0);

  auto missing = ReadJournal(dir + "/nope.log");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir + "/nope.log"), std::string::npos);
}

TEST(JournalTest, SeveralStudiesAreAnError) {
  const std::string path = TestDir("several") + "/journal.log";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  AppendRaw(path,
            "{\"op_code\": 0, \"worker_id\": \"w\", \"study_name\": \"a\", \"directions\": [2]}\n"
            "{\"op_code\": 0, \"worker_id\": \"w\", \"study_name\": \"a\", \"directions\": [1]}\n");
  auto one = ReadJournal(path);  // a duplicate name is ignored, as by Optuna
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(one->maximize);
  AppendRaw(path,
            "{\"op_code\": 0, \"worker_id\": \"w\", \"study_name\": \"b\", \"directions\": [1]}\n");
  auto two = ReadJournal(path);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("holds several studies"), std::string::npos)
      << two.status();
  EXPECT_FALSE(JournalWriter::Open(path).ok());
}

// Written by Optuna 3.1 itself: create_study, set_user_attr, optimize (suggest_float,
// suggest_categorical, report NaN, set_user_attr), enqueue_trial, add_trial, ask + tell PRUNED.
TEST(JournalTest, ReadsOptunaWrittenJournal) {
  const std::string path = TestDir("optuna") + "/journal.log";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  const std::string w = "\"worker_id\": \"7c01127e-a7af-40a5-a85e-654a21764e0e-139884055474240\"";
  const std::string lr_dist =
      "\"{\\\"name\\\": \\\"FloatDistribution\\\", \\\"attributes\\\": {\\\"step\\\": null, "
      "\\\"low\\\": 1e-05, \\\"high\\\": 0.001, \\\"log\\\": true}}\"";
  AppendRaw(
      path,
      "{\"op_code\": 0, " + w +
          ", \"study_name\": \"s\", \"directions\": [2]}\n"
          "{\"op_code\": 2, " +
          w +
          ", \"study_id\": 0, \"user_attr\": {\"cfg\": {\"a\": [1, "
          "NaN], \"\\u00e9\": \"\\u00fc\"}}}\n"
          "{\"op_code\": 4, " +
          w +
          ", \"study_id\": 0, \"datetime_start\": "
          "\"2026-11-22T04:47:03.430274\"}\n"
          "{\"op_code\": 5, " +
          w +
          ", \"trial_id\": 0, \"param_name\": \"lr\", "
          "\"param_value_internal\": 0.0002581947458664485, \"distribution\": " +
          lr_dist +
          "}\n"
          "{\"op_code\": 5, " +
          w +
          ", \"trial_id\": 0, \"param_name\": \"batch_size\", "
          "\"param_value_internal\": 0, \"distribution\": \"{\\\"name\\\": "
          "\\\"CategoricalDistribution\\\", \\\"attributes\\\": {\\\"choices\\\": [16, "
          "32]}}\"}\n"
          "{\"op_code\": 7, " +
          w +
          ", \"trial_id\": 0, \"step\": 1, \"intermediate_value\": "
          "NaN}\n"
          "{\"op_code\": 8, " +
          w +
          ", \"trial_id\": 0, \"user_attr\": {\"lr_effective\": "
          "0.000516389491732897}}\n"
          "{\"op_code\": 6, " +
          w +
          ", \"trial_id\": 0, \"state\": 1, \"values\": [0.5], "
          "\"datetime_complete\": \"2026-11-22T04:47:03.433590\"}\n"
          "{\"op_code\": 4, " +
          w +
          ", \"study_id\": 0, \"datetime_start\": null, \"state\": 4, "
          "\"value\": null, \"values\": null, \"distributions\": {}, \"params\": {}, "
          "\"user_attrs\": {}, \"system_attrs\": {\"fixed_params\": {\"lr\": 0.0001, "
          "\"batch_size\": 32}}, \"intermediate_values\": {}}\n"
          "{\"op_code\": 4, " +
          w +
          ", \"study_id\": 0, \"datetime_start\": "
          "\"2026-11-22T04:47:03.434645\", \"state\": 1, \"value\": 0.3, \"values\": null, "
          "\"datetime_complete\": \"2026-11-22T04:47:03.434645\", \"distributions\": {\"lr\": " +
          lr_dist +
          "}, \"params\": {\"lr\": 0.0001}, \"user_attrs\": {\"phase\": \"x\"}, "
          "\"system_attrs\": {\"completed_rung_0\": 0.1}, \"intermediate_values\": {\"3\": "
          "0.1}}\n"
          "{\"op_code\": 6, " +
          w +
          ", \"trial_id\": 1, \"state\": 0, \"values\": null, "
          "\"datetime_start\": \"2026-11-22T04:47:03.435152\"}\n"
          "{\"op_code\": 6, " +
          w +
          ", \"trial_id\": 1, \"state\": 2, \"values\": null, "
          "\"datetime_complete\": \"2026-11-22T04:47:03.435567\"}\n");
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->operations, 12);
  EXPECT_EQ(contents->study_user_attrs.at("cfg"), "{\"a\": [1, NaN], \"\\u00e9\": \"\\u00fc\"}");
  ASSERT_EQ(contents->study.trials.size(), 3u);
  const Trial& t0 = contents->study.trials[0];
  EXPECT_EQ(t0.state, TrialState::kComplete);
  EXPECT_EQ(t0.value, 0.5);
  EXPECT_EQ(t0.params.at(kLrParam), 0.0002581947458664485);
  EXPECT_EQ(t0.params.at(kBatchParam), 16);
  EXPECT_TRUE(std::isnan(t0.intermediate_values.at(1)));
  EXPECT_EQ(t0.lr_effective, 0.000516389491732897);
  const Trial& t1 = contents->study.trials[1];
  EXPECT_EQ(t1.state, TrialState::kPruned);
  EXPECT_EQ(t1.datetime_start, "2026-11-22T04:47:03.435152");
  EXPECT_EQ(t1.datetime_complete, "2026-11-22T04:47:03.435567");
  EXPECT_TRUE(t1.system_attrs.empty());  // fixed_params is not numeric
  const Trial& t2 = contents->study.trials[2];
  EXPECT_EQ(t2.number, 2);
  EXPECT_EQ(t2.state, TrialState::kComplete);
  EXPECT_EQ(t2.value, 0.3);
  EXPECT_EQ(t2.params.at(kLrParam), 0.0001);
  EXPECT_EQ(t2.phase, "x");
  EXPECT_EQ(t2.system_attrs.at("completed_rung_0"), 0.1);
  EXPECT_EQ(t2.intermediate_values.at(3), 0.1);
}

// The journal's folders (journal.h, CheckJournalPath): a folder is no journal file; a relative
// path's folders are created below the working directory; an absolute path may miss only its
// own folder.
TEST(JournalPathTest, AFolderIsNotAJournalFile) {
  const std::string dir = TestDir("folder");
  std::filesystem::create_directories(dir);
  for (const std::string& path : {dir, dir + "/"}) {
    const absl::Status s = CheckJournalPath(path);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_NE(s.message().find("is a folder, not a journal file"), std::string::npos) << s;
    EXPECT_NE(std::string(JournalWriter::Open(path).status().message()).find("is a folder"),
              std::string::npos);
    EXPECT_NE(std::string(ReadJournal(path).status().message()).find("is a folder"),
              std::string::npos);
  }
}

TEST(JournalPathTest, AnAbsolutePathMayMissOnlyItsOwnFolder) {
  const std::string base = TestDir("absolute");
  // base's parent exists: base itself may be created.
  ASSERT_TRUE(CheckJournalPath(base + "/j.log").ok());
  // base/a/b/j.log misses base and base/a too: refused, naming the first missing folder,
  // and nothing is created.
  const absl::Status deep = CheckJournalPath(base + "/a/b/j.log");
  EXPECT_EQ(deep.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(deep.message().find("no such folder: " + base + " "), std::string::npos) << deep;
  auto refused = JournalWriter::Open(base + "/a/b/j.log");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(base));
  EXPECT_NE(std::string(CheckJournalPath("/nonexistent-tunefleet/dir/j.log").message())
                .find("no such folder: /nonexistent-tunefleet "),
            std::string::npos);
  // Its own folder is created when its parent exists.
  auto opened = JournalWriter::Open(base + "/j.log");
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_TRUE(std::filesystem::is_directory(base));
  // A file where a folder should be.
  EXPECT_NE(std::string(CheckJournalPath(base + "/j.log/x.log").message()).find("is not a folder"),
            std::string::npos);
}

TEST(JournalPathTest, ARelativePathGetsItsFoldersBelowTheWorkingDirectory) {
  const std::string base = TestDir("relative");
  std::filesystem::create_directories(base);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(::chdir(base.c_str()), 0);
  EXPECT_TRUE(CheckJournalPath("runs/a/b/journal.log").ok());
  EXPECT_FALSE(std::filesystem::exists(base + "/runs"));  // checking creates nothing
  {
    auto opened = JournalWriter::Open("runs/a/b/journal.log");
    EXPECT_TRUE(opened.ok()) << opened.status();
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(base + "/runs/a/b/journal.log"));
  // Climbing out of the working directory: as for an absolute path.
  const absl::Status climb = CheckJournalPath("../relative-missing/x/j.log");
  EXPECT_EQ(climb.code(), absl::StatusCode::kNotFound) << climb;
  EXPECT_NE(climb.message().find("no such folder: ../relative-missing"), std::string::npos);
  ASSERT_EQ(::chdir(cwd), 0);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
