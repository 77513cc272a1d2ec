// trainer/train/resolved_config.h: the resolved config reads back as the same config (every field,
// paths made absolute), holds every key of the trainer YAML, and is written beside the output
// with the overrides; a launcher's world size becomes train.devices.
#include "trainer/train/resolved_config.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/yaml_config.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace trainer {
namespace {

// Every field away from its default, strings that need quoting, relative and absolute paths.
TrainerConfig Unusual(const std::string& out) {
  TrainerConfig c;
  c.source = "configs/x.yaml";
  c.model.path = "data/bert tiny: random";
  c.model.kind = "cross_encoder";
  c.model.num_labels = 3;
  c.model.pooling = "cls";
  c.model.max_seq_len = 64;
  c.model.dropout = 0.25;
  c.model.head = "/abs/head.safetensors";
  c.task.type = "classification";
  c.task.train = "data/sick/SICK.txt";
  c.task.format = "sick";
  c.task.num_labels = 3;
  c.task.mnrl_gather = false;
  TrainConfig& t = c.train;
  t.epochs = 0;
  t.max_steps = 17;
  t.batch_size = 12;
  t.lr = 3.0000000000000001e-5 * 7;  // no short decimal
  t.weight_decay = 0.0;
  t.warmup_ratio = 0.05;
  t.schedule = "constant";
  t.max_grad_norm = 0.5;
  t.grad_accum = 3;
  t.precision = "fp16";
  t.seed = 7;
  t.shuffle = false;
  t.batch_sampler = "no_duplicates";
  t.grad_checkpointing = true;
  t.cuda_graphs = "false";
  t.eval_every_steps = 0;
  t.eval_every_samples = 0;
  t.eval_every_epochs = 0.125;
  t.eval_batch_size = 48;
  t.log_every_steps = 3;
  t.ddp_bucket_mb = 8;
  t.ddp_timeout_s = 33;
  t.strategy = "zero1";
  t.devices = 3;
  t.gpu_ids = {0, 2, 3};
  c.output = {out, "last", false, 12.5};
  return c;
}

absl::StatusOr<TrainerConfig> ReadBack(const std::string& yaml) {
  ASSIGN_OR_RETURN(ConfigFile file, ConfigFile::Parse(yaml, "config.yaml"));
  return ParseTrainerConfig(file);
}

TEST(ResolvedConfig, ReadsBackAsTheSameConfigWithAbsolutePaths) {
  const TrainerConfig c = Unusual("runs/x");
  const std::string yaml =
      ResolvedConfigYaml(c, "/work/dir", {"train.lr=2.1e-4", "+task.num_labels=3"});
  auto back = ReadBack(yaml);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(back->model.path, "/work/dir/data/bert tiny: random");
  EXPECT_EQ(back->model.kind, "cross_encoder");
  EXPECT_EQ(back->model.num_labels, 3);
  EXPECT_EQ(back->model.pooling, "cls");
  EXPECT_EQ(back->model.max_seq_len, 64);
  EXPECT_EQ(back->model.dropout, 0.25);
  EXPECT_EQ(back->model.head, "/abs/head.safetensors");
  EXPECT_EQ(back->task.type, "classification");
  EXPECT_EQ(back->task.train, "/work/dir/data/sick/SICK.txt");
  EXPECT_EQ(back->task.eval, "");
  EXPECT_EQ(back->task.format, "sick");
  EXPECT_EQ(back->task.num_labels, 3);
  EXPECT_FALSE(back->task.mnrl_gather);
  const TrainConfig& t = back->train;
  EXPECT_EQ(t.epochs, 0);
  EXPECT_EQ(t.max_steps, 17);
  EXPECT_EQ(t.batch_size, 12);
  EXPECT_EQ(t.lr, c.train.lr);  // bit for bit
  EXPECT_EQ(t.weight_decay, 0.0);
  EXPECT_EQ(t.warmup_ratio, 0.05);
  EXPECT_EQ(t.schedule, "constant");
  EXPECT_EQ(t.max_grad_norm, 0.5);
  EXPECT_EQ(t.grad_accum, 3);
  EXPECT_EQ(t.precision, "fp16");
  EXPECT_EQ(t.seed, 7);
  EXPECT_FALSE(t.shuffle);
  EXPECT_EQ(t.batch_sampler, "no_duplicates");
  EXPECT_TRUE(t.grad_checkpointing);
  EXPECT_EQ(t.cuda_graphs, "false");
  EXPECT_EQ(t.eval_every_steps, 0);
  EXPECT_EQ(t.eval_every_samples, 0);
  EXPECT_EQ(t.eval_every_epochs, 0.125);
  EXPECT_EQ(t.eval_batch_size, 48);
  EXPECT_EQ(t.log_every_steps, 3);
  EXPECT_EQ(t.ddp_bucket_mb, 8);
  EXPECT_EQ(t.ddp_timeout_s, 33);
  EXPECT_EQ(t.strategy, "zero1");
  EXPECT_EQ(t.devices, 3);
  EXPECT_EQ(t.gpu_ids, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(back->output.dir, "/work/dir/runs/x");
  EXPECT_EQ(back->output.save, "last");
  EXPECT_FALSE(back->output.checkpoint);
  EXPECT_EQ(back->output.checkpoint_every_s, 12.5);
  // The header says where it came from.
  EXPECT_TRUE(absl::StrContains(yaml,
                                "From /work/dir/configs/x.yaml in /work/dir, with "
                                "train.lr=2.1e-4 +task.num_labels=3."))
      << yaml;
}

TEST(ResolvedConfig, HoldsEveryKeyOfTheTrainerYaml) {
  const std::string yaml = ResolvedConfigYaml(TrainerConfig(), "/w", {});
  auto file = ConfigFile::Parse(yaml, "config.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  auto root = file->Root();
  ASSERT_TRUE(root.ok());
  // Keys that apply only to some formats or evaluations are written when set (below).
  const std::set<std::string> when_set = {
      "task.loss",         "task.eval_kind",       "task.columns",
      "task.label_column", "task.eval_queries",    "task.eval_corpus",
      "task.eval_qrels",   "task.matryoshka_dims", "task.matryoshka_weights",
      "task.prompts"};
  for (const std::string& key : TrainerConfigKeys()) {
    if (when_set.count(key) > 0) continue;
    const std::vector<std::string> parts = absl::StrSplit(key, '.');
    auto section = root->GetMap(parts[0]);
    ASSERT_TRUE(section.ok()) << key;
    EXPECT_TRUE(section->Has(parts[1])) << key << " is missing:\n" << yaml;
  }
}

TEST(ResolvedConfig, TheColumnRetrievalAndMatryoshkaKeysWhenSet) {
  TrainerConfig c = Unusual("runs/x");
  c.task.type = "mnrl";
  c.task.loss = "mnrl";
  c.task.format = "jsonl";
  c.task.eval = "";
  c.task.columns = {"anchor", "positive", "negative"};
  c.task.label_column = "score";
  c.task.eval_kind = "retrieval";
  c.task.eval_queries = "r/queries.jsonl";
  c.task.eval_corpus = "r/corpus.jsonl";
  c.task.eval_qrels = "r/qrels.tsv";
  c.task.matryoshka_dims = {128, 64};
  c.task.matryoshka_weights = {1, 0.5};
  const std::string yaml = ResolvedConfigYaml(c, "/work/dir", {});
  auto back = ReadBack(yaml);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(back->task.loss, "mnrl");
  EXPECT_EQ(back->task.columns, c.task.columns);
  EXPECT_EQ(back->task.label_column, "score");
  EXPECT_EQ(back->task.eval_kind, "retrieval");
  EXPECT_EQ(back->task.eval_queries, "/work/dir/r/queries.jsonl");
  EXPECT_EQ(back->task.eval_qrels, "/work/dir/r/qrels.tsv");
  EXPECT_EQ(back->task.matryoshka_dims, c.task.matryoshka_dims);
  EXPECT_EQ(back->task.matryoshka_weights, c.task.matryoshka_weights);
}

// task.prompts, a map or one string, reads back as it was (quoted where YAML needs it), and
// model.include_prompt with it.
TEST(ResolvedConfig, ThePromptsWhenSet) {
  TrainerConfig c = Unusual("runs/x");
  c.model.kind = "bi_encoder";
  c.model.include_prompt = false;
  c.task.type = "mnrl";
  c.task.format = "jsonl";
  c.task.prompts = {{"anchor", "query: "}, {"positive", "passage: "}};
  std::string yaml = ResolvedConfigYaml(c, "/work/dir", {});
  auto back = ReadBack(yaml);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(back->task.prompts, c.task.prompts);
  EXPECT_EQ(back->task.prompt, "");
  EXPECT_FALSE(back->model.include_prompt);
  c.task.prompts.clear();
  c.task.prompt = "query: ";
  yaml = ResolvedConfigYaml(c, "/work/dir", {});
  back = ReadBack(yaml);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(back->task.prompt, "query: ");
  EXPECT_TRUE(back->task.prompts.empty());
}

// train.batch_sampler left unresolved (the loss's default) is written null: unset again.
TEST(ResolvedConfig, AnUnresolvedBatchSamplerReadsBackUnset) {
  TrainerConfig c = Unusual("runs/x");
  c.train.batch_sampler = "";
  const std::string yaml = ResolvedConfigYaml(c, "/work/dir", {});
  EXPECT_TRUE(absl::StrContains(yaml, "batch_sampler: ~")) << yaml;
  auto back = ReadBack(yaml);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(back->train.batch_sampler, "");
}

TEST(ResolvedConfig, WrittenBesideTheOutputWithTheLaunchersWorldSize) {
  const std::string out = FreshTestDir("resolved-config");
  TrainerConfig c = Unusual(out);
  ASSERT_TRUE(WriteResolvedConfig(c, {"train.lr=1e-4"}, /*world_size=*/4).ok());
  auto written = ReadFile(JoinPath(out, ".tunefleet/config.yaml"));
  ASSERT_TRUE(written.ok()) << written.status();
  auto back = ReadBack(*written);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->train.devices, 4);
  EXPECT_TRUE(back->train.gpu_ids.empty());
  EXPECT_EQ(back->output.dir, out);
  EXPECT_EQ(*ReadFile(JoinPath(out, ".tunefleet/overrides.yaml")), "- train.lr=1e-4\n");
  // One process: train.devices as configured.
  ASSERT_TRUE(WriteResolvedConfig(c, {}, 1).ok());
  back = ReadBack(*ReadFile(JoinPath(out, ".tunefleet/config.yaml")));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->train.gpu_ids, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(*ReadFile(JoinPath(out, ".tunefleet/overrides.yaml")), "[]\n");
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
