// trainer/train/step_graphs.h and train.cuda_graphs:
//   - anywhere (CI): padding both texts of a pair to their common length changes neither the
//     embeddings nor the loss (the encoder pads them so anyway); the CPU trains eagerly whatever
//     train.cuda_graphs says;
//   - on a GPU (skipped without one): runs that replay CUDA graphs follow the eager run of the
//     same binary on the same GPU, fp32 and dropout 0, line by line in metrics.jsonl (loss,
//     gradient norm before clipping, evaluation) within 1e-5 relative: sts with gradient
//     accumulation, shuffled epochs, a short last batch, warm-up and a linear schedule (the rate
//     reaches the captured optimizer through the device), mnrl, classification; and the golden
//     Hugging Face trajectories (tests/trainer/train/train_trajectory_test) within the CPU test's
//     1e-4.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/trainer/testing/trainer_test_util.h"
#include "trainer/data/datasets.h"
#include "trainer/data/task_data.h"
#include "trainer/data/wordpiece_tokenizer.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/loss_registry.h"
#include "trainer/tasks/task_model.h"
#include "trainer/train/step_graphs.h"
#include "trainer/train/train_loop.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;

std::string TempDir(const std::string& name) { return TestTempPath("step-graphs-" + name); }

TaskData StsData(int64_t rows) {
  auto tokenizer = WordPieceTokenizer::FromVocabFile("data/bert-tiny-random/vocab.txt");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  auto examples = ReadDataset("data/stsbenchmark/sts-dev.csv", "stsb");
  EXPECT_TRUE(examples.ok()) << examples.status();
  examples->resize(static_cast<size_t>(rows));
  auto data = TaskData::Make(DataKind{"sts", RowTarget::kScore}, *examples, "stsb", *tokenizer, 128,
                             "sts-dev");
  EXPECT_TRUE(data.ok()) << data.status();
  return std::move(*data);
}

TEST(StepGraphs, PairPaddedToCommonLengthKeepsEmbeddingsAndLoss) {
  const TaskData data = StsData(16);
  // The first two rows whose texts differ in length.
  TaskBatch batch;
  for (int64_t i = 0; i + 1 < data.size(); ++i) {
    batch = data.Batch({i, i + 1}, 1);
    if (batch.first.input_ids.size(1) != batch.second.input_ids.size(1)) break;
  }
  const TaskBatch padded = StepGraphs::PadPairToCommonLength(batch);
  const int64_t la = batch.first.input_ids.size(1), lb = batch.second.input_ids.size(1);
  ASSERT_NE(la, lb) << "pick rows whose texts differ in padded length";
  const int64_t l = std::max(la, lb);
  for (const TextBatch* t : {&padded.first, &padded.second}) {
    EXPECT_EQ(t->input_ids.size(1), l);
    EXPECT_EQ(t->attention_mask.size(1), l);
    EXPECT_TRUE(t->padded);
  }
  const TextBatch& shorter = la < lb ? padded.first : padded.second;
  const TextBatch& orig = la < lb ? batch.first : batch.second;
  EXPECT_TRUE(torch::equal(shorter.input_ids.narrow(1, 0, std::min(la, lb)), orig.input_ids));
  EXPECT_EQ(shorter.attention_mask.narrow(1, std::min(la, lb), l - std::min(la, lb))
                .sum()
                .item<int64_t>(),
            0);

  auto encoder = LoadBertModel("data/bert-tiny-random");
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  TaskModel model(*encoder, Pooling::kMean, MakeTask("sts").value(), 2);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto [u0, v0] = model->EmbedPair(batch.first, batch.second);
  const auto [u1, v1] = model->EmbedPair(padded.first, padded.second);
  EXPECT_TRUE(torch::allclose(u0, u1, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(v0, v1, 1e-6, 1e-6));
  EXPECT_NEAR(model->Loss(batch).item<double>(), model->Loss(padded).item<double>(), 1e-7);
  // A classification batch (no second text) is left as it is.
  TaskBatch single = batch;
  single.second = TextBatch();
  EXPECT_TRUE(
      StepGraphs::PadPairToCommonLength(single).first.input_ids.is_same(batch.first.input_ids));
}

// STS-B: 200 training rows, batch 16 (the last of each epoch 8), grad_accum 2: 7 steps an epoch.
TrainerConfig SmallSts(const std::string& name) {
  static const std::string train =
      FirstLines("data/stsbenchmark/sts-train.csv", 200, "step-graphs-sts-train-200.csv");
  TrainerConfig c = TinyStsConfig(train, "data/stsbenchmark/sts-dev.csv");
  c.train.epochs = 3;
  c.train.warmup_ratio = 0.2;
  c.train.eval_every_steps = 8;
  c.output.dir = TempDir(name);
  return c;
}

TEST(StepGraphs, CpuTrainsEagerly) {
  TrainerConfig c = SmallSts("cpu");
  c.train.epochs = 1;
  c.train.cuda_graphs = "true";
  TrainOptions o;
  o.quiet = true;
  auto s = RunTraining(c, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->cuda_graphs, 0);
  EXPECT_EQ(s->steps, 7);
}

bool HaveGpu() { return torch::cuda::is_available() && StepGraphs::Available(); }

// Runs `c` on cuda:0 eagerly and with graphs; their metrics.jsonl agree within `tol`.
void CompareEagerAndGraphs(TrainerConfig c, double tol) {
  TrainOptions o;
  o.quiet = true;
  o.device = torch::Device(torch::kCUDA, 0);
  const std::string dir = c.output.dir;
  c.train.cuda_graphs = "false";
  c.output.dir = dir + "-eager";
  auto eager = RunTraining(c, o);
  ASSERT_TRUE(eager.ok()) << eager.status();
  EXPECT_EQ(eager->cuda_graphs, 0);
  c.train.cuda_graphs = "auto";
  c.output.dir = dir + "-graphs";
  auto graphs = RunTraining(c, o);
  ASSERT_TRUE(graphs.ok()) << graphs.status();
  EXPECT_GE(graphs->cuda_graphs, 2);  // a micro-step key and the update at least
  const auto a = ReadJsonLines(dir + "-eager/metrics.jsonl");
  const auto b = ReadJsonLines(dir + "-graphs/metrics.jsonl");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GE(a.size(), 10u);
  for (size_t i = 0; i < a.size(); ++i) {
    for (const auto& [key, want] : a[i].items()) {
      if (key == "train/samples_per_s" || !want.is_number()) continue;
      ASSERT_TRUE(b[i].contains(key)) << "line " << i << " lacks " << key;
      EXPECT_LE(RelErr(b[i][key].get<double>(), want.get<double>()), tol)
          << "line " << i << " " << key << ": graphs " << b[i][key] << ", eager " << want;
    }
  }
}

TEST(StepGraphs, StsWithAccumulationFollowsEagerOnGpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  CompareEagerAndGraphs(SmallSts("sts"), 1e-5);
}

TEST(StepGraphs, MnrlAndClassificationFollowEagerOnGpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  TrainerConfig m = SmallSts("mnrl");
  m.task.type = "mnrl";
  m.task.train = "data/paws-wiki/dev.tsv";
  m.task.format = "paws";
  m.task.eval = "";
  m.train.epochs = 0;
  m.train.max_steps = 20;
  m.train.grad_accum = 1;
  CompareEagerAndGraphs(m, 1e-5);
  TrainerConfig k = m;
  k.output.dir = TempDir("cls");
  k.task.type = "classification";
  k.task.train = "data/sick/SICK.txt";
  k.task.format = "sick";
  k.task.num_labels = 3;
  CompareEagerAndGraphs(k, 1e-5);
}

// The golden trajectories of train_trajectory_test, replayed as graphs on the GPU.
TEST(StepGraphs, GoldenTrajectoriesOnGpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no GPU";
  std::ifstream in("data/golden/train_trajectories.json");
  ASSERT_TRUE(in.good());
  const Json all = Json::parse(in);
  struct Case {
    const char* kind;
    const char* type;
    const char* data;
    const char* format;
  };
  for (const Case& k : {Case{"cosine", "sts", "data/stsbenchmark/sts-train.csv", "stsb"},
                        Case{"mnrl", "mnrl", "data/paws-wiki/dev.tsv", "paws"},
                        Case{"cls", "classification", "data/sick/SICK.txt", "sick"}}) {
    const Json& g = all.at(k.kind);
    TrainerConfig c =
        GoldenTrainerConfig(g, k.type, k.data, k.format, TempDir(std::string("golden-") + k.kind));
    c.output.save = "none";
    if (std::string(k.kind) == "cls") {
      c.model.head = "data/golden/cls_head.safetensors";
      c.task.num_labels = 3;
    }
    TrainOptions o;
    o.quiet = true;
    o.device = torch::Device(torch::kCUDA, 0);
    auto s = RunTraining(c, o);
    ASSERT_TRUE(s.ok()) << k.kind << ": " << s.status();
    EXPECT_GE(s->cuda_graphs, 2) << k.kind;
    const auto lines = ReadJsonLines(c.output.dir + "/metrics.jsonl");
    const Json& loss = g.at("losses");
    const Json& norm = g.at("grad_norms_before_clip");
    ASSERT_EQ(lines.size(), loss.size()) << k.kind;
    double worst = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      worst = std::max({worst, RelErr(lines[i]["train/loss"].get<double>(), loss[i].get<double>()),
                        RelErr(lines[i]["train/grad_norm"].get<double>(), norm[i].get<double>())});
      EXPECT_LE(RelErr(lines[i]["train/loss"].get<double>(), loss[i].get<double>()), 1e-4)
          << k.kind << " step " << i + 1;
      EXPECT_LE(RelErr(lines[i]["train/grad_norm"].get<double>(), norm[i].get<double>()), 1e-4)
          << k.kind << " step " << i + 1;
    }
    std::printf("%s on the GPU with CUDA graphs: %lld graphs, max relative error %.3g\n", k.kind,
                static_cast<long long>(s->cuda_graphs), worst);
  }
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
