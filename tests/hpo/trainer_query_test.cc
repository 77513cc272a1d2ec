// hpo/config/trainer_query.h: hpo asks the trainer (a real process: here a script standing in
// for `trainer`) and reads its JSON; a refused config is the trainer's own line, InvalidArgument;
// a trainer that cannot run or answers garbage says so. The real trainer's JSON:
// tests/integration/train_dry_run_json_test; hpo through it: sweep_config_test, bad_input_test.
#include "hpo/config/trainer_query.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/hpo/trainer_in_process.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::HasSubstr;

std::string Script(const std::string& name, const std::string& body) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(TrainerQuery, RunsTheTrainerWithItsArgumentsAndWorldSize) {
  // Echoes what it got inside an answer.
  const std::string fake = Script("fake_trainer.sh", R"(printf '%s' "{\"world_size\": $WORLD_SIZE, \
\"train_examples\": 3, \"samples_per_epoch\": 4, \"data_error\": \"\", \
\"keys\": {\"train.lr\": 2e-05, \"model.path\": \"$*\"}, \
\"checks\": [{\"override\": \"a=1\", \"error\": \"\"}, {\"override\": \"b=x\", \"error\": \"no\"}]}"
)");
  TrainerQuery q;
  q.config = "c.yaml";
  q.overrides = {"train.lr=2e-5"};
  q.checks = {"a=1", "b=x"};
  q.world_size = 2;
  absl::StatusOr<TrainerAnswer> a = QueryTrainer(TrainerBinary(fake), q);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->world_size, 2);
  EXPECT_EQ(a->samples_per_epoch, 4);
  EXPECT_EQ(a->keys.at("train.lr"), "2e-05");
  EXPECT_EQ(a->keys.at("model.path"),
            "train --config c.yaml --dry_run --json --check=a=1 --check=b=x train.lr=2e-5");
  ASSERT_EQ(a->checks.size(), 2u);
  EXPECT_EQ(a->checks[1].first, "b=x");
  EXPECT_EQ(a->checks[1].second, "no");
  q.checks = {"a=1"};  // an answer to other questions
  EXPECT_THAT(std::string(QueryTrainer(TrainerBinary(fake), q).status().message()),
              HasSubstr("answered 2 checks of 1"));
}

TEST(TrainerQuery, ARefusedConfigIsTheTrainersLine) {
  const std::string refusing = Script(
      "refusing_trainer.sh",
      "echo 'trainer train: error: c.yaml:3: train.epochs: expected an integer' >&2; exit 2\n");
  absl::StatusOr<std::string> a = TrainerBinary(refusing)(TrainerQuery{"c.yaml"});
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.status().message(), "c.yaml:3: train.epochs: expected an integer");
}

TEST(TrainerQuery, ATrainerThatCannotAnswer) {
  absl::StatusOr<std::string> a = TrainerBinary("/nonexistent/trainer")(TrainerQuery{"c.yaml"});
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("cannot run /nonexistent/trainer"));
  const std::string crashing = Script("crashing_trainer.sh", "echo boom >&2; exit 1\n");
  a = TrainerBinary(crashing)(TrainerQuery{"c.yaml"});
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("exited 1: boom"));
  const std::string garbage = Script("garbage_trainer.sh", "echo not json\n");
  EXPECT_THAT(std::string(QueryTrainer(TrainerBinary(garbage), {"c.yaml"}).status().message()),
              HasSubstr("answered no JSON object"));
}

// The trainer's own dry run (in-process): samples of configs/sbert_stsb.yaml's data, its keys.
TEST(TrainerQuery, TheTrainersAnswer) {
  TrainerQuery q;
  q.config = "configs/sbert_stsb.yaml";
  q.checks = {"train.epochs=1.5", "model.pooling=cls"};
  q.world_size = 3;
  absl::StatusOr<TrainerAnswer> a = QueryTrainer(InProcessTrainer(), q);
  ASSERT_TRUE(a.ok()) << a.status();
  std::ifstream data("data/stsbenchmark/sts-train.csv");
  int64_t rows = 0;
  for (std::string line; std::getline(data, line);) ++rows;
  ASSERT_GT(rows, 0);
  EXPECT_EQ(a->train_examples, rows);
  EXPECT_EQ(a->samples_per_epoch, (rows + 2) / 3 * 3);
  EXPECT_EQ(a->keys.at("model.path"), "data/bert-tiny-random");
  EXPECT_EQ(a->keys.at("train.grad_accum"), "1");
  EXPECT_THAT(a->checks[0].second, HasSubstr("expected an integer"));
  EXPECT_EQ(a->checks[1].second, "");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
