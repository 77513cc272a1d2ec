// ReadJournal (hpo/journal/journal_replay.h) replaying journals as Optuna 3.1 does: corrupt and
// malformed lines, operations Optuna ignores, distributions, several studies, and a journal
// Optuna itself wrote.
#include "hpo/journal/journal_replay.h"

#include <cmath>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "hpo/journal/journal_writer.h"
#include "tests/hpo/journal_fixture.h"

namespace tunefleet {
namespace hpo {
namespace {

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

// A line nested 100,000 deep (issue 32) crashed `hpo status`, `best`, `report` and `sweep
// --resume`; it is now an undecodable line like any other, named by its line.
TEST(JournalTest, ADeeplyNestedLineIsAnErrorNotACrash) {
  const std::string path = TestDir("deep") + "/journal.log";
  {
    auto writer = JournalWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->CreateStudy("s", true).ok());
  }
  AppendRaw(path, "{\"op_code\": 4, \"worker_id\": \"w\", \"study_id\": 0, \"x\": " +
                      std::string(100000, '[') + std::string(100000, ']') + "}\n");  // line 2
  AppendRaw(path,
            "{\"op_code\": 4, \"worker_id\": \"w\", \"study_id\": 0, "
            "\"datetime_start\": null}\n");
  auto contents = ReadJournal(path);
  ASSERT_FALSE(contents.ok());
  EXPECT_NE(
      contents.status().message().find(path + ":2: not valid JSON (nested more than 1000 deep)"),
      std::string::npos)
      << contents.status();
}

TEST(JournalTest, MalformedOperationNamesTheLine) {
  const std::string path = NewJournalPath("malformed");
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
  EXPECT_EQ(contents->operations, static_cast<int64_t>(Lines(FileText(path)).size()));
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
  const std::string path = NewJournalPath("several");
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
  const std::string path = NewJournalPath("optuna");
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

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
