// hpo/config/trainer_query.h: hpo asks the trainer (a real process: here a script standing in
// for `trainer`) and reads its JSON; a refused config is the trainer's own line, InvalidArgument;
// a trainer that cannot run or answers garbage says so. The real trainer's JSON:
// tests/integration/train_dry_run_json_test; hpo through it: sweep_config_test, bad_input_test.
#include "hpo/config/trainer_query.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
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
\"files\": [{\"key\": \"model.path\", \"path\": \"m\", \"kind\": \"folder\"}], \
\"checks\": [{\"override\": \"a=1\", \"error\": \"\"}, {\"override\": \"b=x\", \"error\": \"no\"}], \
\"preflight\": {\"model\": {\"key\": \"model.path\", \"path\": \"m\", \"error\": \"bad\", \
\"model_type\": \"bert\", \"parameters\": 7}, \"models\": [{\"path\": \"n\", \"error\": \"\"}], \
\"least_tokens\": 2, \"memory\": [{\"batch\": 8, \"least_bytes\": 1.5, \"bytes\": 1e9}]}}"
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
  ASSERT_EQ(a->preflight.files.size(), 1u);
  EXPECT_EQ(a->preflight.files[0].key, "model.path");
  EXPECT_TRUE(a->preflight.files[0].folder);
  EXPECT_EQ(a->preflight.model_error, "bad");
  EXPECT_EQ(a->preflight.parameters, 7);
  EXPECT_EQ(a->preflight.other_models.at("n"), "");
  EXPECT_EQ(a->preflight.memory.at(8).least_bytes, 1.5);
  EXPECT_EQ(a->preflight.memory.at(8).bytes, 1e9);
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
  // A trainer without the preflight (another build's) is not taken at its word.
  EXPECT_THAT(ParseTrainerAnswer(R"({"world_size": 1, "train_examples": 0, "samples_per_epoch": 0,
                                     "keys": {}, "files": [], "checks": []})")
                  .status()
                  .message(),
              HasSubstr("answered no preflight"));
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
  // What hpo checks before the sweep: the files, the model folder, the memory per batch size.
  ASSERT_FALSE(a->preflight.files.empty());
  EXPECT_EQ(a->preflight.files[0].key, "model.path");
  EXPECT_EQ(a->preflight.files[0].path, "data/bert-tiny-random");
  EXPECT_TRUE(a->preflight.files[0].folder);
  EXPECT_EQ(a->preflight.model_key, "model.path");
  EXPECT_EQ(a->preflight.model_error, "");
  EXPECT_GT(a->preflight.parameters, 4000000);  // bert-tiny: 4.4M
  EXPECT_EQ(a->preflight.least_tokens, 2);
}

// Batch sizes to estimate are asked as checks of train.batch_size; the estimate grows with the
// batch (the activations), and its lower bound stays below the upper one.
TEST(TrainerQuery, TheMemoryEstimatePerBatchSize) {
  TrainerQuery q;
  q.config = "configs/sbert_stsb.yaml";
  q.checks = {"train.batch_size=16", "train.batch_size=128"};
  absl::StatusOr<TrainerAnswer> a = QueryTrainer(InProcessTrainer(), q);
  ASSERT_TRUE(a.ok()) << a.status();
  const std::map<int64_t, BatchMemory>& m = a->preflight.memory;
  ASSERT_TRUE(m.count(16) && m.count(128)) << m.size();
  EXPECT_GT(m.at(16).bytes, 0);
  EXPECT_GT(m.at(128).bytes, 2 * m.at(16).bytes);
  EXPECT_LT(m.at(16).least_bytes, m.at(16).bytes);
  EXPECT_TRUE(a->preflight.other_models.empty());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
