// Trainer YAML: the shipped config parses, and bad inputs name the file, the line and the key.
#include "trainer/config/train_config.h"

#include <fstream>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

const char* const kBase[] = {
    "model: {path: m, pooling: mean, max_seq_len: 128, dropout: 0.1}",  // 1
    "task: {type: sts, train: a.csv, eval: b.csv, format: stsb}",       // 2
    "train:",                                                           // 3
    "  epochs: 1",                                                      // 4
    "  batch_size: 32",                                                 // 5
    "  lr: 2.0e-5",                                                     // 6
    "  warmup_ratio: 0.1",                                              // 7
    "  precision: bf16",                                                // 8
    "  grad_accum: 1",                                                  // 9
    "output: {dir: runs/x, save: best}",                                // 10
};

std::string Write(int line, const std::string& text) {
  std::vector<std::string> lines(std::begin(kBase), std::end(kBase));
  if (line > 0) lines[line - 1] = text;
  std::string path = ::testing::TempDir() + "/trainer.yaml";
  std::ofstream(path) << absl::StrJoin(lines, "\n") << "\n";
  return path;
}

TEST(TrainerConfigTest, BaseParsesWithDefaults) {
  auto c = LoadTrainerConfig(Write(0, ""));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model.pooling, "mean");
  EXPECT_EQ(c->task.type, "sts");
  EXPECT_EQ(c->task.eval, "b.csv");
  EXPECT_EQ(c->train.batch_size, 32);
  EXPECT_EQ(c->train.schedule, "linear");  // default
  EXPECT_DOUBLE_EQ(c->train.max_grad_norm, 1.0);
  EXPECT_EQ(c->output.save, "best");
  EXPECT_TRUE(c->output.checkpoint);                    // default
  EXPECT_DOUBLE_EQ(c->output.checkpoint_every_s, 300);  // default
}

TEST(TrainerConfigTest, OverridesLikeLightning) {
  auto c =
      LoadTrainerConfig(Write(0, ""), {"train.lr=3e-5", "train.precision=fp32", "model.pooling=cls",
                                       "train.shuffle=false", "output.checkpoint_every_s=0.5"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->train.lr, 3e-5);
  EXPECT_EQ(c->train.precision, "fp32");
  EXPECT_EQ(c->model.pooling, "cls");
  EXPECT_FALSE(c->train.shuffle);
  EXPECT_DOUBLE_EQ(c->output.checkpoint_every_s, 0.5);
}

// The three evaluation cadence keys of a loaded config: (steps, samples, epochs).
struct EvalCadence {
  int64_t steps, samples;
  double epochs;
};

void ExpectCadence(const absl::StatusOr<TrainerConfig>& c, const EvalCadence& want) {
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->train.eval_every_steps, want.steps);
  EXPECT_EQ(c->train.eval_every_samples, want.samples);
  EXPECT_DOUBLE_EQ(c->train.eval_every_epochs, want.epochs);
}

TEST(TrainerConfigTest, EvalCadenceKeys) {
  // Defaults: every 100 steps.
  ExpectCadence(LoadTrainerConfig(Write(0, "")), {100, 0, 0});
  // The default steps give way when steps is not set.
  ExpectCadence(LoadTrainerConfig(Write(9, "  eval_every_samples: 5000")), {0, 5000, 0});
  ExpectCadence(LoadTrainerConfig(Write(9, "  eval_every_epochs: 0.125")), {0, 0, 0.125});
  // Every other epoch.
  ExpectCadence(LoadTrainerConfig(Write(9, "  eval_every_epochs: 2")), {0, 0, 2.0});
  // All three 0: only at the end.
  ExpectCadence(LoadTrainerConfig(Write(9,
                                        "  eval_every_steps: 0\n  eval_every_samples: 0\n"
                                        "  eval_every_epochs: 0")),
                {0, 0, 0});
}

// What a sweep passes over a config that sets eval_every_steps: 50.
TEST(TrainerConfigTest, SweepOverridesSwitchStepsToEpochs) {
  const std::string path = Write(9, "  eval_every_steps: 50");
  const std::vector<std::string> to_epochs = {
      "train.eval_every_steps=0", "train.eval_every_samples=0", "train.eval_every_epochs=0.125"};
  ExpectCadence(LoadTrainerConfig(path, to_epochs), {0, 0, 0.125});
  ExpectCadence(
      LoadTrainerConfig(path, {"train.eval_every_steps=0", "train.eval_every_samples=4096"}),
      {0, 4096, 0});

  // Without zeroing the config's steps: refused, naming both keys.
  auto c = LoadTrainerConfig(path, {"train.eval_every_epochs=0.125"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(
      std::string(c.status().message()).find("eval_every_steps and eval_every_epochs are both > 0"),
      std::string::npos)
      << c.status();

  // The shipped config (eval_every_steps: 50) with the sweep's overrides.
  ExpectCadence(LoadTrainerConfig("configs/sbert_stsb.yaml", to_epochs), {0, 0, 0.125});
}

// TrainerConfigKeys() (what a sweep may search) lists exactly the keys the parser accepts:
// each section's "unknown key" error names them.
TEST(TrainerConfigTest, KeyListMatchesTheParser) {
  std::vector<std::string> accepted;
  for (const std::string section : {"model", "task", "train", "output"}) {
    auto c = LoadTrainerConfig(Write(0, ""), {section + ".zz_unknown=1"});
    ASSERT_FALSE(c.ok());
    const std::string message(c.status().message());
    const std::string marker = "expected one of: ";
    const size_t at = message.find(marker);
    ASSERT_NE(at, std::string::npos) << message;
    for (absl::string_view key : absl::StrSplit(message.substr(at + marker.size()), ", ")) {
      // task.datasets: a map of datasets (trainer/config/datasets_key.h), not a key of the table.
      if (section == "task" && key == "datasets") continue;
      accepted.push_back(section + "." + std::string(key));
    }
  }
  EXPECT_EQ(TrainerConfigKeys(), accepted);
}

// The schema's bounds and checks (trainer/config/config_schema.h) say what the parser said
// before the table: each override alone, the error's end.
TEST(TrainerConfigTest, SchemaChecksKeepTheirErrorTexts) {
  const std::pair<const char*, const char*> cases[] = {
      {"model.max_seq_len=1", "model.max_seq_len: must be in [2, 8192], got 1"},
      {"model.dropout=1", "model.dropout: must be in [0, 1), got 1"},
      {"model.path=''", "model.path: must name a model directory"},
      {"task.train=''", "task.train: must name a data file"},
      {"task.num_labels=1", "task.num_labels: must be 0 (from the data) or at least 2, got 1"},
      {"task.columns=[a, b]",
       "task.columns: only applies to task.format jsonl, csv or tsv (not "
       "stsb)"},
      {"task.matryoshka_dims=[64, 64]", "task.matryoshka_dims: names 64 twice"},
      {"task.eval_qrels=q.tsv",
       "task.eval_queries: is missing: task.eval_queries, task.eval_corpus and task.eval_qrels go "
       "together"},
      {"train.epochs=-1", "train.epochs: must be >= 0, got -1"},
      {"train.epochs=0", "train.epochs: epochs and max_steps are both 0: nothing to train"},
      {"train.batch_size=0", "train.batch_size: must be a positive integer, got 0"},
      {"train.batch_size=2000000", "train.batch_size: must be at most 1048576 (2^20), got 2000000"},
      {"train.lr=0", "train.lr: must be > 0, got 0"},
      {"train.warmup_ratio=1.5", "train.warmup_ratio: must be in [0, 1], got 1.5"},
      {"train.max_grad_norm=-1", "train.max_grad_norm: must be >= 0 (0: no clipping), got -1"},
      {"train.length_buckets=[64, 32]",
       "train.length_buckets: must be ascending lengths >= 1, e.g. [32, 64, 128]"},
      {"train.eval_every_epochs=-1",
       "train.eval_every_epochs: must be a finite number >= 0 (0: not by epochs), got -1"},
      {"train.ddp_bucket_mb=0", "train.ddp_bucket_mb: must be in [1, 4096], got 0"},
      {"train.devices=0",
       "train.devices: must be -1 (every local GPU), a number of ranks >= 1 or "
       "a list of GPU ids, got 0"},
      {"output.dir=''", "output.dir: must not be empty"},
      {"output.checkpoint_every_s=-1",
       "output.checkpoint_every_s: must be >= 0 (0: at every evaluation), got -1"},
  };
  for (const auto& [override, error] : cases) {
    auto c = LoadTrainerConfig(Write(0, ""), {override});
    ASSERT_FALSE(c.ok()) << override;
    EXPECT_TRUE(absl::EndsWith(c.status().message(), error)) << override << ": " << c.status();
  }
}

// `trainer train --help` lists every key, from the same table.
TEST(TrainerConfigTest, HelpListsEveryKey) {
  const std::string help = TrainerConfigHelp();
  for (const std::string& key : TrainerConfigKeys()) {
    EXPECT_TRUE(absl::StrContains(help, "  " + key + " ")) << key << " missing from\n" << help;
  }
  EXPECT_TRUE(absl::StrContains(help, "  train.lr = 2e-05 ")) << help;
  EXPECT_TRUE(absl::StrContains(help, "  model.path (required) ")) << help;
}

TEST(TrainerConfigTest, ShippedConfigParses) {
  auto c = LoadTrainerConfig("configs/sbert_stsb.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task.format, "stsb");
  EXPECT_EQ(c->model.path, "data/bert-tiny-random");
}

// train.devices: -1, N or a list of GPU ids; the checks that need the machine run only when the
// caller says how many GPUs it has (the trainer does, hpo does not).
TEST(TrainerConfigTest, DevicesDefaultsToOneRank) {
  auto c = LoadTrainerConfig(Write(0, ""), {}, /*local_gpus=*/0);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->train.devices, 1);
  EXPECT_TRUE(c->train.gpu_ids.empty());
  EXPECT_EQ(LocalRankCount(c->train, 0), 1);
  EXPECT_EQ(LocalRankCount(c->train, 8), 1);
}

TEST(TrainerConfigTest, DevicesCountsAndLists) {
  auto all = LoadTrainerConfig(Write(9, "  devices: -1"), {}, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->train.devices, -1);
  EXPECT_EQ(LocalRankCount(all->train, 0), 1);                    // CPU-only: one rank
  EXPECT_EQ(LocalRankCount(all->train, 4), 4);                    // one per GPU
  auto cpu = LoadTrainerConfig(Write(9, "  devices: 3"), {}, 0);  // 3 Gloo ranks on the CPU
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(LocalRankCount(cpu->train, 0), 3);
  auto list = LoadTrainerConfig(Write(9, "  devices: [0, 2, 3]"), {}, 4);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->train.gpu_ids, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(list->train.devices, 3);
  EXPECT_EQ(LocalRankCount(list->train, 4), 3);
  // --gpu_ids' override, and an override of a list by a count.
  auto flag = LoadTrainerConfig(Write(9, "  devices: 2"), {"train.devices=[1,0]"}, 2);
  ASSERT_TRUE(flag.ok()) << flag.status();
  EXPECT_EQ(flag->train.gpu_ids, (std::vector<int64_t>{1, 0}));
  auto count = LoadTrainerConfig(Write(9, "  devices: [0, 1]"), {"train.devices=2"}, 2);
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->train.devices, 2);
  EXPECT_TRUE(count->train.gpu_ids.empty());
  // The machine unknown (hpo checking a sweep): only the syntax is checked.
  EXPECT_TRUE(LoadTrainerConfig(Write(9, "  devices: [7]")).ok());
  EXPECT_TRUE(LoadTrainerConfig(Write(9, "  devices: 16")).ok());
}

TEST(TrainerConfigTest, DevicesTheMachineLacks) {
  const std::string path = Write(9, "  devices: [0, 3]");
  auto no_gpu = LoadTrainerConfig(path, {}, 0);
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_EQ(std::string(no_gpu.status().message()),
            path +
                ":9: train.devices: lists GPU ids but this machine has no GPU (N: N ranks on "
                "the CPU)");
  auto two = LoadTrainerConfig(path, {}, 2);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(std::string(two.status().message()),
            path + ":9: train.devices: GPU 3 is not on this machine (GPUs 0-1)");
  auto one = LoadTrainerConfig(path, {}, 1);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(std::string(one.status().message()),
            path + ":9: train.devices: GPU 3 is not on this machine (GPU 0 only)");
  auto many = LoadTrainerConfig(Write(9, "  devices: 4"), {}, 2);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(std::string(many.status().message()),
            Write(9, "  devices: 4") + ":9: train.devices: 4 ranks, but this machine has 2 GPUs");
  EXPECT_TRUE(LoadTrainerConfig(path, {}, 4).ok());
}

struct BadCase {
  int line;
  std::string text;
  int expect_line;
  std::string message;
};

class TrainerConfigBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(TrainerConfigBadInputTest, NamesFileLineAndKey) {
  const BadCase& bad = GetParam();
  const std::string path = Write(bad.line, bad.text);
  auto c = LoadTrainerConfig(path);
  ASSERT_FALSE(c.ok()) << "accepted: " << bad.text;
  EXPECT_EQ(std::string(c.status().message()),
            path + ":" + std::to_string(bad.expect_line) + ": " + bad.message);
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, TrainerConfigBadInputTest,
    ::testing::Values(
        BadCase{1, "model: {path: m, pooling: avg}", 1,
                "model.pooling: expected one of mean, cls, max; got 'avg'"},
        BadCase{1, "model: {path: m, max_seq_len: 1}", 1,
                "model.max_seq_len: must be in [2, 8192], got 1"},
        BadCase{1, "model: {path: m, dropout: 1.5}", 1,
                "model.dropout: must be in [0, 1), got 1.5"},
        BadCase{1, "model: {pooling: mean}", 1, "model: missing required key 'path'"},
        BadCase{2, "task: {type: sts, train: a.csv}", 2, "task: missing required key 'format'"},
        BadCase{2, "task: {type: sts, train: a.csv, format: xlsx}", 2,
                "task.format: expected one of stsb, sick, paws, mrpc, tsv, csv, jsonl; got "
                "'xlsx'"},
        BadCase{2, "task: {type: sts, train: a.csv, format: stsb, columns: [a, b]}", 2,
                "task.columns: only applies to task.format jsonl, csv or tsv (not stsb)"},
        BadCase{2, "task: {type: mnrl, train: a.jsonl, format: jsonl, columns: [a]}", 2,
                "task.columns: must name at least 2 text columns (e.g. [anchor, positive]), or 1 "
                "for task type embedding"},
        BadCase{2, "task: {type: mnrl, train: a.jsonl, format: jsonl, columns: [a, b, a]}", 2,
                "task.columns: names \"a\" twice"},
        BadCase{2,
                "task: {type: sts, train: a.jsonl, format: jsonl, matryoshka_dims: [64, 32], "
                "matryoshka_weights: [1]}",
                2,
                "task.matryoshka_weights: has 1 weights for 2 task.matryoshka_dims (one per dim)"},
        BadCase{2, "task: {type: sts, train: a.jsonl, format: jsonl, matryoshka_dims: [0]}", 2,
                "task.matryoshka_dims: must be dims >= 1, e.g. [768, 512, 256, 128, 64]"},
        BadCase{2, "task: {type: mnrl, train: a.jsonl, format: jsonl, eval_queries: q.jsonl}", 2,
                "task.eval_corpus: is missing: task.eval_queries, task.eval_corpus and "
                "task.eval_qrels go together"},
        BadCase{2,
                "task: {type: mnrl, train: a.jsonl, eval: b.csv, format: jsonl, eval_queries: q, "
                "eval_corpus: c, eval_qrels: r}",
                2,
                "task.eval_queries: and task.eval are both given: retrieval files replace "
                "task.eval (give one or the other)"},
        BadCase{2, "task: {type: mnrl, train: a.jsonl, format: jsonl, eval_kind: ranking}", 2,
                "task.eval_kind: expected one of similarity, accuracy, retrieval, reranking, "
                "triplet; got 'ranking'"},
        BadCase{2, "task: {type: sts, train: a.csv, format: stsb, eval_kind: triplet}", 2,
                "task.eval_kind: only applies to task.format jsonl, csv or tsv (not stsb)"},
        BadCase{4, "  epochs: one", 4, "train.epochs: expected an integer, got 'one'"},
        BadCase{4, "  epochs: 0", 4,
                "train.epochs: epochs and max_steps are both 0: nothing to train"},
        BadCase{5, "  batch_size: 0", 5, "train.batch_size: must be a positive integer, got 0"},
        BadCase{6, "  lr: -1", 6, "train.lr: must be > 0, got -1"},
        BadCase{7, "  warmup_ratio: 2", 7, "train.warmup_ratio: must be in [0, 1], got 2"},
        BadCase{8, "  precision: fp8", 8,
                "train.precision: expected one of fp32, bf16, fp16; got 'fp8'"},
        BadCase{9, "  grad_accum: 0", 9, "train.grad_accum: must be a positive integer, got 0"},
        BadCase{9, "  lrate: 1", 9,
                "train.lrate: unknown key; expected one of: epochs, max_steps, batch_size, lr, "
                "weight_decay, warmup_ratio, schedule, max_grad_norm, grad_accum, precision, "
                "seed, shuffle, group_by_length, batch_sampler, multi_dataset_sampler, "
                "grad_checkpointing, cuda_graphs, "
                "length_buckets, eval_every_steps, "
                "eval_every_samples, eval_every_epochs, eval_batch_size, "
                "log_every_steps, ddp_bucket_mb, ddp_timeout_s, ddp_comm_dtype, strategy, "
                "devices"},
        BadCase{9, "  batch_sampler: random", 9,
                "train.batch_sampler: expected one of default, no_duplicates; got 'random'"},
        BadCase{9, "  eval_every_samples: -1", 9,
                "train.eval_every_samples: must be >= 0 (0: not by samples), got -1"},
        BadCase{9, "  eval_every_samples: 1.5", 9,
                "train.eval_every_samples: expected an integer, got '1.5'"},
        BadCase{9, "  eval_every_epochs: -0.25", 9,
                "train.eval_every_epochs: must be a finite number >= 0 (0: not by epochs), got "
                "-0.25"},
        BadCase{9, "  eval_every_epochs: .inf", 9,
                "train.eval_every_epochs: expected a finite number, got '.inf'"},
        // Two cadences: one error naming both, at the line of the later key.
        BadCase{9, "  eval_every_steps: 50\n  eval_every_epochs: 0.125", 10,
                "train.eval_every_epochs: eval_every_steps and eval_every_epochs are both > 0: "
                "set at most one of them (the other to 0)"},
        BadCase{9, "  eval_every_samples: 1000\n  eval_every_epochs: 0.5", 10,
                "train.eval_every_epochs: eval_every_samples and eval_every_epochs are both > 0: "
                "set at most one of them (the other to 0)"},
        BadCase{9, "  eval_every_steps: 50\n  eval_every_samples: 1000", 10,
                "train.eval_every_samples: eval_every_steps and eval_every_samples are both > 0: "
                "set at most one of them (the other to 0)"},
        BadCase{9, "  eval_batch_size: -1", 9,
                "train.eval_batch_size: must be >= 0 (0: chosen for the device), got -1"},
        BadCase{9, "  cuda_graphs: sometimes", 9,
                "train.cuda_graphs: expected one of auto, true, false; got 'sometimes'"},
        BadCase{9, "  shuffle: sometimes", 9,
                "train.shuffle: expected true or false, got 'sometimes'"},
        BadCase{9, "  ddp_timeout_s: 0", 9, "train.ddp_timeout_s: must be >= 1, got 0"},
        BadCase{9, "  strategy: zero3", 9,
                "train.strategy: expected one of ddp, zero1; got 'zero3'"},
        BadCase{9, "  ddp_bucket_mb: 0", 9, "train.ddp_bucket_mb: must be in [1, 4096], got 0"},
        BadCase{9, "  devices: 0", 9,
                "train.devices: must be -1 (every local GPU), a number of ranks >= 1 or a list "
                "of GPU ids, got 0"},
        BadCase{9, "  devices: -2", 9,
                "train.devices: must be -1 (every local GPU), a number of ranks >= 1 or a list "
                "of GPU ids, got -2"},
        BadCase{9, "  devices: two", 9, "train.devices: expected an integer, got 'two'"},
        BadCase{9, "  devices: []", 9,
                "train.devices: an empty list names no GPU (-1: every local GPU, N: N ranks)"},
        BadCase{9, "  devices: [0, -1]", 9, "train.devices: GPU ids are >= 0, got -1"},
        BadCase{9, "  devices: [0, 2, 0]", 9, "train.devices: GPU 0 is listed twice"},
        BadCase{10, "output: {dir: runs/x, save: sometimes}", 10,
                "output.save: expected one of best, last, none; got 'sometimes'"},
        BadCase{10, "output: {dir: runs/x, checkpoint_every_s: -5}", 10,
                "output.checkpoint_every_s: must be >= 0 (0: at every evaluation), got -5"},
        BadCase{10, "output: {dir: runs/x, checkpoint_every: 5}", 10,
                "output.checkpoint_every: unknown key; expected one of: dir, save, checkpoint, "
                "checkpoint_every_s"},
        BadCase{10, "optimizer: adamw", 10,
                "optimizer: unknown key; expected one of: model, task, train, output"}));

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
