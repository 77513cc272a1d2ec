// launcher/agent/program_events.h: a program trial's reports as TensorBoard events, read back by
// tests/trainer/testing/event_reader (independent of common/event_file.h): the HParams session
// start from TrialSpec.params_json, each report's metrics and samples at its step, the session's
// end.
#include "launcher/agent/program_events.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"
#include "tests/trainer/testing/event_reader.h"

namespace tunefleet {
namespace launcher {
namespace {

namespace tb = ::tunefleet::tensorboard;

TEST(ProgramEventsTest, ReportsAndTheSessionAsTheTrainerWritesThem) {
  const std::string dir = FreshTestDir("program_events") + "/trial-4";
  auto events = ProgramEvents::Open(dir, R"({"lr": 0.001, "batch_size": 16, "pooling": "cls"})");
  ASSERT_TRUE(events.ok()) << events.status();
  comm::Report r;
  r.set_step(10);
  r.set_samples(320);
  (*r.mutable_metrics())["eval/spearman"] = 0.5;
  ASSERT_TRUE((*events)->Add(r).ok());
  ASSERT_TRUE((*events)->End(/*success=*/false).ok());
  ASSERT_TRUE((*events)->End(true).ok());  // once only
  const auto files = trainer::EventFiles(dir + "/tensorboard");
  ASSERT_EQ(files.size(), 1u);
  auto read = trainer::ReadEvents(files[0]);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 4u);  // version, session start, scalars, session end
  tb::HParamsPluginData data;
  ASSERT_TRUE(
      data.ParseFromString((*read)[1].summary().value(0).metadata().plugin_data().content()));
  EXPECT_EQ(data.session_start_info().hparams().at("pooling").string_value(), "cls");
  EXPECT_EQ(data.session_start_info().hparams().at("batch_size").number_value(), 16);
  const tb::Event& scalars = (*read)[2];
  EXPECT_EQ(scalars.step(), 10);
  ASSERT_EQ(scalars.summary().value_size(), 2);
  EXPECT_EQ(scalars.summary().value(0).tag(), "eval/spearman");
  EXPECT_EQ(scalars.summary().value(1).tag(), "samples");
  EXPECT_FLOAT_EQ(scalars.summary().value(1).simple_value(), 320);
  ASSERT_TRUE(
      data.ParseFromString((*read)[3].summary().value(0).metadata().plugin_data().content()));
  EXPECT_EQ(data.session_end_info().status(), tb::STATUS_FAILURE);
}

TEST(ProgramEventsTest, WithoutParametersNoSession) {
  const std::string dir = FreshTestDir("program_events_bare");
  auto events = ProgramEvents::Open(dir, "");
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_TRUE((*events)->End(true).ok());
  auto read = trainer::ReadEvents(trainer::EventFiles(dir + "/tensorboard").at(0));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->size(), 1u);
  EXPECT_FALSE(ProgramEvents::Open(dir, "not json").ok());
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
