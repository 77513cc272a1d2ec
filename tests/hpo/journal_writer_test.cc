// JournalWriter (hpo/journal/journal_writer.h): the exact lines Optuna 3.1 writes, reopening a
// journal to continue its study, refusing what Optuna would ignore, and repairing a torn last line.
#include "hpo/journal/journal_writer.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/journal/journal_replay.h"
#include "tests/hpo/journal_fixture.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(JournalTest, RoundTrip) {
  // An absolute path: its own folder is created (journal_file_test.cc has the rule).
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
  const std::string text = FileText(path);
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
  const std::string clean = FileText(path);
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
    EXPECT_EQ(FileText(path), clean);
    ASSERT_TRUE((*writer)->SetIntermediateValue(0, 1, 0.5).ok());
    Trial t = MakeTrial(0, 1e-4, 32, "random", 0);
    t.state = TrialState::kComplete;
    t.value = 0.5;
    ASSERT_TRUE((*writer)->Finish(t).ok());
  }
  const std::string text = FileText(path);
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

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
