// common/event_file.h: the CRC-32C against the standard check values, the record framing and
// the events against tests/trainer/testing/event_reader (an independent reader with a bitwise CRC),
// a corrupted byte caught, and the trainer's own event file: a 20-step `trainer train` run of
// bert-tiny-random on the CPU (RunTraining, what `trainer train` runs) writes
// OUTPUT_DIR/tensorboard/events.out.tfevents.*, whose records all pass the CRC checks and hold,
// at each logged step, every metrics.jsonl key (train/loss, lr, eval/... and samples) with the
// same value as metrics.jsonl (to float precision: within 4 ulps); under a sweep
// (TUNEFLEET_HPARAMS) the HParams plugin's session start and end.
#include "common/event_file.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "common/proto/tensorboard.pb.h"
#include "tests/trainer/testing/event_reader.h"
#include "tests/trainer/testing/trainer_test_util.h"
#include "trainer/train/train_loop.h"

namespace tunefleet {
namespace trainer {
namespace {

namespace tb = ::tunefleet::tensorboard;

TEST(Crc32c, StandardCheckValues) {
  // RFC 3720 (iSCSI), appendix B.4, and the common "123456789" check value.
  EXPECT_EQ(Crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62a8ab43u);
  EXPECT_EQ(BitwiseCrc32c("123456789"), 0xe3069283u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32c(ascending), 0x46dd794eu);
  EXPECT_EQ(Crc32c(ascending), BitwiseCrc32c(ascending));
}

TEST(EventFile, RecordsReadBackAndACorruptByteIsCaught) {
  const std::string dir = TestTempPath("event-file-unit");
  ASSERT_TRUE(RemoveTree(dir).ok()) << dir;  // a clean folder: one event file, ours
  auto w = EventFileWriter::Open(dir, 1700000000.5);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE(
      (*w)->WriteScalars(3, {{"train/loss", 0.75}, {"lr", 1e-4}, {"bad", NAN}}, 1700000001).ok());
  HParams h;
  h.numbers = {{"lr", 0.001}, {"batch_size", 32}};
  h.strings = {{"phase", "grid"}};
  ASSERT_TRUE((*w)->WriteSessionStart(h, "/runs/s/trial-3", 1700000002).ok());
  ASSERT_TRUE((*w)->WriteSessionEnd(true, 1700000003).ok());
  const std::string path = (*w)->path();
  w->reset();
  EXPECT_EQ(EventFiles(dir), std::vector<std::string>{path});
  EXPECT_NE(path.find("/events.out.tfevents.1700000000."), std::string::npos) << path;

  auto events = ReadEvents(path);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 4u);
  EXPECT_EQ((*events)[0].file_version(), "brain.Event:2");
  EXPECT_DOUBLE_EQ((*events)[0].wall_time(), 1700000000.5);
  const tb::Event& scalars = (*events)[1];
  EXPECT_EQ(scalars.step(), 3);
  ASSERT_EQ(scalars.summary().value_size(), 2);  // NaN skipped, keys in order
  EXPECT_EQ(scalars.summary().value(0).tag(), "lr");
  EXPECT_FLOAT_EQ(scalars.summary().value(0).simple_value(), 1e-4f);
  EXPECT_EQ(scalars.summary().value(1).tag(), "train/loss");
  EXPECT_FLOAT_EQ(scalars.summary().value(1).simple_value(), 0.75f);

  const tb::Summary::Value& start = (*events)[2].summary().value(0);
  EXPECT_EQ(start.tag(), "_hparams_/session_start_info");
  EXPECT_EQ(start.metadata().plugin_data().plugin_name(), "hparams");
  tb::HParamsPluginData data;
  ASSERT_TRUE(data.ParseFromString(start.metadata().plugin_data().content()));
  EXPECT_EQ(data.version(), 0);
  ASSERT_TRUE(data.has_session_start_info());
  const auto& hp = data.session_start_info().hparams();
  EXPECT_DOUBLE_EQ(hp.at("lr").number_value(), 0.001);
  EXPECT_DOUBLE_EQ(hp.at("batch_size").number_value(), 32);
  EXPECT_EQ(hp.at("phase").string_value(), "grid");
  EXPECT_EQ(data.session_start_info().model_uri(), "/runs/s/trial-3");

  const tb::Summary::Value& end = (*events)[3].summary().value(0);
  EXPECT_EQ(end.tag(), "_hparams_/session_end_info");
  ASSERT_TRUE(data.ParseFromString(end.metadata().plugin_data().content()));
  EXPECT_EQ(data.session_end_info().status(), tb::STATUS_SUCCESS);
  EXPECT_DOUBLE_EQ(data.session_end_info().end_time_secs(), 1700000003);

  // One flipped bit in the second record's data: the reader names it.
  std::string bytes = ReadAll(path);
  const size_t first = 12 + static_cast<unsigned char>(bytes[0]) + 4;
  bytes[first + 14] ^= 0x01;
  WriteAll(path, bytes);
  auto broken = ReadEvents(path);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(std::string(broken.status().message()).find("record 2"), std::string::npos)
      << broken.status();
}

TEST(EventFile, ParseHParams) {
  auto h = ParseHParams(R"({"lr": 0.001, "batch_size": 32, "phase": "grid", "warm": true})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_DOUBLE_EQ(h->numbers.at("lr"), 0.001);
  EXPECT_DOUBLE_EQ(h->numbers.at("batch_size"), 32);
  EXPECT_DOUBLE_EQ(h->numbers.at("warm"), 1);
  EXPECT_EQ(h->strings.at("phase"), "grid");
  EXPECT_FALSE(ParseHParams("[1, 2]").ok());
  EXPECT_FALSE(ParseHParams("{\"a\": [1]}").ok());
  EXPECT_FALSE(ParseHParams("{lr: 1").ok());
}

// Acceptance 1 of issue 20.
TEST(EventFile, TrainerWritesEveryLoggedStep) {
  const std::string out = TestTempPath("event-file-train");
  ASSERT_TRUE(RemoveTree(out).ok()) << out;  // a clean folder: one event file, ours
  const std::string train = FirstLines("data/stsbenchmark/sts-train.csv", 640, "ev-train.csv");
  const std::string dev = FirstLines("data/stsbenchmark/sts-dev.csv", 64, "ev-dev.csv");
  TrainerConfig c = TinyStsConfig(train, dev);
  c.train.max_steps = 20;
  c.train.log_every_steps = 1;
  c.train.eval_every_steps = 10;
  c.output.dir = out;
  c.output.save = "none";
  c.output.checkpoint = false;
  ::setenv("TUNEFLEET_HPARAMS", R"({"lr": 0.0001, "batch_size": 16})", 1);
  TrainOptions quiet;
  quiet.quiet = true;
  auto s = RunTraining(c, quiet);
  ::unsetenv("TUNEFLEET_HPARAMS");
  ASSERT_TRUE(s.ok()) << s.status();

  const std::vector<std::string> files = EventFiles(out + "/tensorboard");
  ASSERT_EQ(files.size(), 1u);
  auto events = ReadEvents(files[0]);
  ASSERT_TRUE(events.ok()) << events.status();
  std::map<int64_t, std::map<std::string, float>> scalars;  // step -> tag -> value
  bool started = false, ended = false;
  for (const tb::Event& e : *events) {
    for (const tb::Summary::Value& v : e.summary().value()) {
      if (v.tag() == "_hparams_/session_start_info") started = true;
      if (v.tag() == "_hparams_/session_end_info") ended = true;
      if (v.value_case() == tb::Summary::Value::kSimpleValue) {
        scalars[e.step()][v.tag()] = v.simple_value();
      }
    }
  }
  EXPECT_TRUE(started);
  EXPECT_TRUE(ended);
  const std::vector<nlohmann::json> lines = ReadJsonLines(out + "/metrics.jsonl");
  ASSERT_EQ(lines.size(), 20u);
  ASSERT_EQ(scalars.size(), lines.size());
  int evals = 0;
  for (const nlohmann::json& line : lines) {
    const int64_t step = line["step"].get<int64_t>();
    ASSERT_TRUE(scalars.count(step)) << "no event at step " << step;
    const auto& got = scalars[step];
    EXPECT_TRUE(got.count("train/loss")) << "step " << step;
    for (auto it = line.begin(); it != line.end(); ++it) {
      if (it.key() == "step" || !it.value().is_number()) continue;
      ASSERT_TRUE(got.count(it.key())) << it.key() << " at step " << step;
      // metrics.jsonl keeps 9 significant digits, so its float may be an ulp off the event's.
      EXPECT_FLOAT_EQ(got.at(it.key()), static_cast<float>(it.value().get<double>()))
          << it.key() << " at step " << step;
    }
    EXPECT_EQ(got.size(), line.size() - 1) << "step " << step;  // nothing more than the line
    evals += got.count("eval/spearman");
  }
  EXPECT_EQ(evals, 2);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
