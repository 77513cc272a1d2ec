// The loss registry: the trainer YAML's task section as trainer_torch reads it (the reader
// installed, as its main does), the task of each registered type, and what a reader that links
// no LibTorch (none installed) still accepts.
#include "trainer/tasks/loss_registry.h"

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/config/train_config.h"
#include "trainer/tasks/all_losses.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Yaml(const std::string& model, const std::string& task) {
  const std::string path = ::testing::TempDir() + "/loss_registry.yaml";
  std::ofstream(path) << model << "\n"
                      << task << "\n"
                      << "train: {epochs: 1}\n";
  return path;
}

class WithReader : public ::testing::Test {
 protected:
  void SetUp() override { SetTaskSectionReader(&LossRegistryReader()); }
  void TearDown() override { SetTaskSectionReader(nullptr); }
  // The error of loading `task` (line 2) under model line `model` (line 1), "" when it loads.
  static std::string Error(const std::string& task, const std::string& model = "model: {path: m}") {
    const std::string path = Yaml(model, task);
    auto c = LoadTrainerConfig(path);
    if (c.ok()) return "";
    const std::string message(c.status().message());
    EXPECT_TRUE(absl::StartsWith(message, path + ":")) << message;
    return message.substr(path.size() + 1);
  }
};

TEST_F(WithReader, TypeMustBeRegistered) {
  const std::string e = Error("task: {type: regression, train: a.csv, format: stsb}");
  EXPECT_THAT(e, StartsWith("2: task.type: expected one of sts, mnrl, nli, classification"));
  EXPECT_THAT(e, HasSubstr("; got 'regression'"));
}

// The config after loading `task` under `model`; its error as Error() gives it otherwise.
TrainerConfig Loaded(const std::string& task, const std::string& model) {
  auto c = LoadTrainerConfig(Yaml(model, task));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : TrainerConfig();
}

TEST_F(WithReader, TheLossNamesTheTypeWhenTaskTypeIsLeftOut) {
  const std::string cross = "model: {path: m, kind: cross_encoder}";
  TrainerConfig c = Loaded("task: {train: a.csv, format: stsb}", cross);
  EXPECT_EQ(c.task.type, "cross_encoder");
  EXPECT_EQ(c.task.loss, "bce");
  EXPECT_EQ(c.task.eval_kind, "reranking");
  c = Loaded("task: {loss: ce, train: a.txt, format: sick}", cross);
  EXPECT_EQ(c.task.type, "classification");
  c = Loaded("task: {loss: softmax, train: a.txt, format: sick}", cross);
  EXPECT_EQ(c.task.type, "classification");  // softmax fits nli too: the model's kind decides
  c = Loaded("task: {loss: softmax, train: a.txt, format: sick}", "model: {path: m}");
  EXPECT_EQ(c.task.type, "nli");
  c = Loaded("task: {loss: mnrl, train: a.jsonl, format: jsonl}", "model: {path: m}");
  EXPECT_EQ(c.task.type, "mnrl");
}

TEST_F(WithReader, ModelKindFitsTheType) {
  const std::string cross = "model: {path: m, kind: cross_encoder}";
  EXPECT_THAT(Error("task: {train: a.csv, format: stsb}"),
              StartsWith("2: task.type: is required unless task.loss names the rows"));
  EXPECT_EQ(Error("task: {loss: cosent, train: a.jsonl, format: jsonl}", cross),
            "2: task.loss: cosent does not fit model.kind: cross_encoder (a pair as one text): use "
            "mnrl, softmax, bce, ce, margin_mse, mse, lambda or listnet");
  // A loss of both kinds takes the model's: mnrl's in-batch grid of pairs for a cross-encoder.
  EXPECT_EQ(Loaded("task: {loss: mnrl, train: a.jsonl, format: jsonl}", cross).task.type,
            "cross_encoder_mnrl");
  EXPECT_EQ(
      Loaded("task: {loss: mse, train: a.jsonl, format: jsonl}", "model: {path: m}").task.type,
      "embedding");
  EXPECT_THAT(Error("task: {type: sts, train: a.csv, format: stsb}", cross),
              StartsWith("1: model.kind: cross_encoder does not fit task type sts"));
  EXPECT_EQ(Error("task: {loss: cosine, train: a.csv, format: stsb}"),
            "2: task.type: is required: task.loss cosine fits sts and contrastive");
  EXPECT_EQ(Error("task: {type: cross_encoder, train: a.csv, format: stsb}"),
            "1: model.kind: must be cross_encoder for task type cross_encoder");
  EXPECT_THAT(Error("task: {loss: bce, train: a.csv, format: stsb}",
                    "model: {path: m, kind: cross_encoder, num_labels: 3}"),
              StartsWith("1: model.num_labels: must be 1 for task type cross_encoder"));
  EXPECT_EQ(
      Error("task: {type: sts, train: a.csv, format: stsb}", "model: {path: m, num_labels: 2}"),
      "1: model.num_labels: only applies to model.kind: cross_encoder");
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, eval_kind: reranking}"),
            "2: task.eval_kind: reranking does not fit task type sts (it takes similarity, "
            "retrieval or triplet)");
  EXPECT_THAT(Error("task: {loss: nope, train: a.csv, format: stsb}"),
              StartsWith("2: task.loss: expected one of"));
}

TEST_F(WithReader, KeysOnlyForTheLossesThatTakeThem) {
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, num_labels: 3}"),
            "2: task.num_labels: only applies to task.loss softmax and ce");
  EXPECT_EQ(
      Error("task: {type: sts, train: a.csv, format: stsb}", "model: {path: m, head: h}"),
      "1: model.head: only applies to task.loss mnrl, softmax, bce, ce, margin_mse, mse, lambda "
      "and listnet");
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, loss_scale: 10}"),
            "2: task.loss_scale: only applies to task.loss cosent, angle, mnrl, cached_mnrl and "
            "symmetric_mnrl");
  EXPECT_EQ(Error("task: {type: mnrl, loss: mnrl, train: a.csv, format: stsb, "
                  "cached_mini_batch: 8}"),
            "2: task.cached_mini_batch: only applies to task.loss cached_mnrl and cached_gist");
  EXPECT_EQ(Error("task: {type: mnrl, loss: cached_mnrl, train: a.csv, format: stsb, "
                  "cached_mini_batch: 0}"),
            "2: task.cached_mini_batch: must be >= 1, got 0");
  EXPECT_EQ(Error("task: {type: sts, loss: cosent, train: a.csv, format: stsb, loss_scale: -1}"),
            "2: task.loss_scale: must be a number > 0, got -1");
  // What the resolved config writes for every type loads again.
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, num_labels: 0, "
                  "mnrl_gather: false}"),
            "");
  EXPECT_EQ(Error("task: {type: nli, train: a.csv, format: sick, num_labels: 3}",
                  "model: {path: m, head: h}"),
            "");
}

TEST_F(WithReader, UnknownKeysNameTheKeysOfEveryLoss) {
  std::string keys =
      "type, loss, train, eval, format, columns, label_column, prompts, eval_kind, eval_queries, "
      "eval_corpus, eval_qrels, num_labels, mnrl_gather, matryoshka_dims, matryoshka_weights";
  for (const std::string& key : LossRegistryReader().keys) {
    if (key != "num_labels") keys += ", " + key;
  }
  EXPECT_THAT(keys, HasSubstr("loss_scale, num_negatives, cached_mini_batch, margin"));
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, num_label: 3}"),
            "2: task.num_label: unknown key; expected one of: " + keys + ", datasets");
}

TEST_F(WithReader, TheLossMustFitTheType) {
  EXPECT_EQ(Error("task: {type: mnrl, loss: cosent, train: a.csv, format: stsb}"),
            "2: task.loss: cosent does not fit task type mnrl (anchor, positive and optional "
            "negatives): use mnrl, cached_mnrl, symmetric_mnrl, triplet, gist or cached_gist");
  EXPECT_EQ(Error("task: {type: nli, loss: mnrl, train: a.csv, format: sick}"),
            "2: task.loss: mnrl does not fit task type nli (pairs with a label): use softmax");
  EXPECT_EQ(Error("task: {type: sts, loss: triplet, train: a.csv, format: stsb}"),
            "2: task.loss: triplet does not fit task type sts (pairs with a score): use cosine, "
            "cosent or angle");
  EXPECT_THAT(Error("task: {type: sts, loss: quadruplet, train: a.csv, format: stsb}"),
              StartsWith("2: task.loss: expected one of cosine, cosent, angle, mnrl, "
                         "cached_mnrl, softmax"));
  for (const char* loss : {"cosine", "cosent", "angle"}) {
    EXPECT_EQ(
        Error(absl::StrCat("task: {type: sts, loss: ", loss, ", train: a.csv, format: stsb}")), "");
  }
  EXPECT_EQ(Error("task: {type: sts, loss: softmax, train: a.csv, format: stsb, "
                  "matryoshka_dims: [64]}"),
            "2: task.loss: softmax does not fit task type sts (pairs with a score): use cosine, "
            "cosent or angle");
  EXPECT_EQ(Error("task: {type: nli, train: a.csv, format: sick, matryoshka_dims: [64]}"),
            "2: task.matryoshka_dims: only applies to losses over embeddings (cosine, cosent, "
            "angle, mnrl, cached_mnrl, contrastive, symmetric_mnrl or triplet), not softmax");
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, eval_kind: accuracy}"),
            "2: task.eval_kind: accuracy does not fit task type sts (it takes similarity, "
            "retrieval or triplet)");
  EXPECT_EQ(Error("task: {type: classification, train: a.csv, format: sick, "
                  "eval_kind: retrieval}"),
            "2: task.eval_kind: retrieval does not fit task type classification (it takes "
            "accuracy)");
}

TEST_F(WithReader, TheTypeSetsWhatTheYamlLeavesOut) {
  const std::string path =
      Yaml("model: {path: m}", "task: {type: mnrl, train: a.csv, format: stsb}");
  auto c = LoadTrainerConfig(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task.loss, "mnrl");
  EXPECT_EQ(c->task.eval_kind, "similarity");
  auto nli =
      LoadTrainerConfig(Yaml("model: {path: m}", "task: {type: nli, train: a, format: sick}"));
  ASSERT_TRUE(nli.ok()) << nli.status();
  EXPECT_EQ(nli->task.loss, "softmax");
  EXPECT_EQ(nli->task.eval_kind, "accuracy");
}

TEST(LossRegistryTest, EveryLossBuildsItsTaskForEveryTypeItFits) {
  ASSERT_GE(AllLossKinds().size(), 7u);
  for (const LossKind* kind : AllLossKinds()) {
    EXPECT_EQ(FindLossKind(kind->loss), kind);
    for (const std::string& type : kind->types) {
      TaskConfig config;
      config.type = type;
      config.loss = kind->loss;
      auto task = MakeTask(config);
      ASSERT_TRUE(task.ok()) << task.status();
      EXPECT_EQ((*task)->type(), type);
      EXPECT_EQ((*task)->loss(), kind->loss);
      EXPECT_EQ((*task)->train_data().task, type);
    }
  }
  // Every type's default loss is registered and fits it.
  for (const TaskType& type : AllTaskTypes()) {
    auto task = MakeTask(type.name);
    ASSERT_TRUE(task.ok()) << type.name << ": " << task.status();
    EXPECT_EQ((*task)->loss(), type.default_loss);
  }
  const TaskPtr sts = MakeTask("sts").value(), mnrl = MakeTask("mnrl").value(),
                nli = MakeTask("nli").value(), cls = MakeTask("classification").value();
  EXPECT_EQ(sts->train_data().target, RowTarget::kScore);
  EXPECT_EQ(mnrl->train_data().target, RowTarget::kPositivePairs);
  EXPECT_EQ(mnrl->eval_data().target, RowTarget::kScore);  // scored as sts
  EXPECT_TRUE(mnrl->in_batch_negatives());
  EXPECT_FALSE(sts->in_batch_negatives());
  EXPECT_EQ(nli->train_data().target, RowTarget::kLabel);
  EXPECT_EQ(cls->train_data().texts(), 1);
  EXPECT_EQ(nli->train_data().texts(), 2);
  EXPECT_FALSE(sts->has_head());
  EXPECT_TRUE(nli->has_head() && cls->has_head());
  EXPECT_TRUE(cls->uses_pooler());
  EXPECT_FALSE(nli->uses_pooler());
  EXPECT_EQ(PrimaryMetric(sts->evaluation()), std::string("eval/spearman"));
  EXPECT_EQ(PrimaryMetric(cls->evaluation()), std::string("eval/accuracy"));
  TaskConfig retrieval;
  retrieval.type = "mnrl";
  retrieval.loss = "cached_mnrl";
  retrieval.eval_kind = "retrieval";
  const TaskPtr cached = MakeTask(retrieval).value();
  EXPECT_EQ(PrimaryMetric(cached->evaluation()), std::string("eval/ndcg@10"));
  EXPECT_TRUE(cached->multi_pass_backward());
  EXPECT_EQ(cached->Describe(),
            "CachedMultipleNegativesRankingLoss (scale 20, candidates gathered from all ranks, "
            "mini-batch 32)");
  retrieval.loss = "cosent";
  EXPECT_FALSE(MakeTask(retrieval).ok());  // cosent does not fit mnrl
  auto unknown = MakeTask("regression");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()),
              StartsWith("unknown task type \"regression\" (expected sts, mnrl, nli, "
                         "classification"));
}

TEST(LossRegistryTest, WithoutAReaderTheCommonKeysAreChecked) {
  // A reader of the YAML without LibTorch: any type name; the trainer checks it later.
  auto c = LoadTrainerConfig(Yaml("model: {path: m}",
                                  "task: {type: regression, train: a.csv, "
                                  "format: stsb}"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(MakeTask(c->task).ok());
  auto bad = LoadTrainerConfig(
      Yaml("model: {path: m}", "task: {type: sts, train: a.csv, format: stsb, typo: 1}"));
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
