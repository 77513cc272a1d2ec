// The triplet evaluation (trainer/tasks/triplet_evaluator.h): TripletEvaluator's comparison on
// hand-made embeddings (strict: a tie is not counted; scale-free; the margin), the row checks of
// MakeTripletData (exactly one negative, labels ignored), and EvaluateTriplets through Evaluate's
// EvalSet entry point on a small random encoder on the CPU: the accuracy of each text embedded
// alone, the matryoshka "@d" keys, a dim above the width refused, the model's train mode kept;
// two Gloo ranks (forked; this test runs first, before LibTorch starts its thread pools) return
// the same metrics as one process.
#include "trainer/tasks/triplet_evaluator.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gtest/gtest.h"
#include "tests/test_util/forked_ranks.h"
#include "trainer/data/datasets.h"
#include "trainer/data/task_data.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/tasks/evaluator.h"
#include "trainer/tasks/loss_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

struct Fixture {
  std::shared_ptr<const Tokenizer> tokenizer;
  TaskModel model{nullptr};
  std::vector<Example> rows;  // the first 40 rows of data/sick-triplets/train.jsonl
};

Fixture Make() {
  Fixture f;
  auto tokenizer = LoadFolderTokenizer("data/bert-tiny-random");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  f.tokenizer = *tokenizer;
  BertConfig c;
  c.vocab_size = f.tokenizer->vocab_size();
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 37;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.1;
  torch::manual_seed(0);
  f.model = TaskModel(BertModel(c), Pooling::kMean, MakeTask("mnrl").value(), 0);
  auto rows = ReadDataset("data/sick-triplets/train.jsonl", "jsonl");
  EXPECT_TRUE(rows.ok()) << rows.status();
  f.rows.assign(rows->begin(), rows->begin() + 40);
  return f;
}

std::unique_ptr<EvalSet> TripletEval(const Fixture& f) {
  auto data = MakeTripletData(f.rows, *f.tokenizer, 128, "triplets");
  EXPECT_TRUE(data.ok()) << data.status();
  auto eval = std::make_unique<EvalSet>();
  eval->triplets = std::make_unique<TaskData>(*std::move(data));
  return eval;
}

// Each text embedded alone (a batch of one, no padding), in eval mode.
torch::Tensor EmbedEach(TaskModel& model, const Tokenizer& tokenizer,
                        const std::vector<std::string>& texts) {
  torch::NoGradGuard no_grad;
  model->eval();
  std::vector<torch::Tensor> rows;
  for (const std::string& text : texts) {
    rows.push_back(model->Embed(PadTexts({tokenizer.Encode(text, 128)}, tokenizer.pad_id())));
  }
  model->train();
  return torch::cat(rows);
}

// Each rank: the metrics with the group against those of one process.
int TwoRanksAsOne(comm::ProcessGroup& group) {
  Fixture f = Make();
  const std::unique_ptr<EvalSet> eval = TripletEval(f);
  auto alone = Evaluate(f.model, *eval, torch::kCPU, 3, Precision::kFp32, nullptr, {8});
  auto ranked = Evaluate(f.model, *eval, torch::kCPU, 3, Precision::kFp32, &group, {8});
  if (!alone.ok() || !ranked.ok()) {
    std::fprintf(stderr, "rank %d: %s %s\n", group.rank(), alone.status().ToString().c_str(),
                 ranked.status().ToString().c_str());
    return 1;
  }
  int failures = alone->size() == 2 ? 0 : 1;
  for (const auto& [key, value] : *alone) {
    const auto it = ranked->find(key);
    if (it == ranked->end() || it->second != value) {
      std::fprintf(stderr, "rank %d: %s %.17g alone, %.17g with 2 ranks\n", group.rank(),
                   key.c_str(), value, it == ranked->end() ? -1.0 : it->second);
      ++failures;
    }
  }
  return failures;
}

TEST(EvaluateTriplets, TwoGlooRanksAsOneProcess) {
  if (!comm::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "this LibTorch has no Gloo";
  EXPECT_EQ(RunForkedRanks(2, TwoRanksAsOne), std::vector<int>(2, 0));
}

TEST(TripletCorrect, StrictCosineComparison) {
  // Rows: clearly right; clearly wrong; the positive equal to the negative (a tie); equal cosines
  // from different vectors (a tie); right, with vectors of other lengths.
  const torch::Tensor a =
      torch::tensor({{1.f, 0.f}, {1.f, 0.f}, {1.f, 0.f}, {1.f, 0.f}, {2.f, 0.f}});
  const torch::Tensor p =
      torch::tensor({{1.f, 0.1f}, {0.f, 1.f}, {1.f, 1.f}, {1.f, 1.f}, {3.f, 1.f}});
  const torch::Tensor n =
      torch::tensor({{0.f, 1.f}, {1.f, 0.f}, {1.f, 1.f}, {1.f, -1.f}, {5.f, 5.f}});
  const torch::Tensor hits = TripletCorrect(a, p, n);
  ASSERT_EQ(hits.scalar_type(), torch::kBool);
  EXPECT_TRUE(torch::equal(hits, torch::tensor({true, false, false, false, true})));
  EXPECT_DOUBLE_EQ(hits.to(torch::kDouble).mean().item<double>(), 0.4);
  // cos(a, p) - cos(a, n): 0.995 on row 0, 0.949 - 0.707 = 0.242 on row 4.
  EXPECT_TRUE(torch::equal(TripletCorrect(a, p, n, 0.5),
                           torch::tensor({true, false, false, false, false})));
  EXPECT_TRUE(
      torch::equal(TripletCorrect(a, p, n, -0.1), torch::tensor({true, false, true, true, true})));
  // bf16 embeddings are compared in fp32, as TripletEvaluator's float32 numpy arrays.
  EXPECT_TRUE(torch::equal(TripletCorrect(a.to(torch::kBFloat16), p, n), hits));
}

TEST(MakeTripletData, ExactlyOneNegative) {
  const Fixture f = Make();
  std::vector<Example> rows(f.rows.begin(), f.rows.begin() + 3);
  rows[1].negatives.clear();
  auto pairs = MakeTripletData(rows, *f.tokenizer, 128, "dev.jsonl");
  ASSERT_FALSE(pairs.ok());
  EXPECT_EQ(pairs.status().message(),
            "dev.jsonl: row 2 has 2 text columns; triplet evaluation takes 3 (anchor, positive, "
            "negative)");
  rows[1].negatives = {"one", "two"};
  auto wide = MakeTripletData(rows, *f.tokenizer, 128, "dev.jsonl");
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.status().message(),
            "dev.jsonl: row 2 has 4 text columns; triplet evaluation takes 3 (anchor, positive, "
            "negative)");
  EXPECT_FALSE(MakeTripletData({}, *f.tokenizer, 128, "empty.jsonl").ok());

  rows[1].negatives = {"one"};
  rows[0].label = 0;  // would be dropped as a non-paraphrase by mnrl's training rows
  auto labelled = MakeTripletData(rows, *f.tokenizer, 128, "dev.jsonl");
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  EXPECT_EQ(labelled->size(), 3);
  EXPECT_EQ(labelled->num_negatives(), 1);
}

TEST(EvaluateTriplets, AsEachTextEmbeddedAloneWithDims) {
  Fixture f = Make();
  const std::unique_ptr<EvalSet> eval = TripletEval(f);
  EXPECT_EQ(eval->size(), 40);
  EXPECT_EQ(eval->num_labels(), 0);

  f.model->train();
  auto metrics = Evaluate(f.model, *eval, torch::kCPU, 7, Precision::kFp32, nullptr, {8, 32});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(f.model->is_training());
  ASSERT_EQ(metrics->size(), 3u);

  std::vector<std::string> anchors, positives, negatives;
  for (const Example& e : f.rows) {
    anchors.push_back(e.a);
    positives.push_back(e.b);
    negatives.push_back(e.negatives[0]);
  }
  const torch::Tensor a = EmbedEach(f.model, *f.tokenizer, anchors);
  const torch::Tensor p = EmbedEach(f.model, *f.tokenizer, positives);
  const torch::Tensor n = EmbedEach(f.model, *f.tokenizer, negatives);
  const auto accuracy = [](const torch::Tensor& hits) {
    return hits.to(torch::kDouble).mean().item<double>();
  };
  const double whole = accuracy(TripletCorrect(a, p, n));
  EXPECT_DOUBLE_EQ(metrics->at("eval/accuracy"), whole);
  EXPECT_DOUBLE_EQ(metrics->at("eval/accuracy@32"), whole);
  EXPECT_DOUBLE_EQ(
      metrics->at("eval/accuracy@8"),
      accuracy(TripletCorrect(a.narrow(1, 0, 8), p.narrow(1, 0, 8), n.narrow(1, 0, 8))));
  EXPECT_GT(whole, 0.0);
  EXPECT_LT(whole, 1.0);

  auto too_wide = Evaluate(f.model, *eval, torch::kCPU, 7, Precision::kFp32, nullptr, {64});
  ASSERT_FALSE(too_wide.ok());
  EXPECT_EQ(too_wide.status().message(),
            "triplet evaluation on triplets: matryoshka dim 64 is outside [1, the embedding "
            "width 32]");

  // Pairs without a negative are not triplets.
  std::vector<Example> two = {f.rows[0], f.rows[1]};
  for (Example& e : two) e.negatives.clear();
  auto no_negatives = TaskData::Make(DataKind{"mnrl", RowTarget::kPositivePairs}, two, "jsonl",
                                     *f.tokenizer, 128, "pairs");
  ASSERT_TRUE(no_negatives.ok()) << no_negatives.status();
  auto bad = EvaluateTriplets(f.model, *no_negatives, torch::kCPU, 7, Precision::kFp32);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "triplet evaluation on pairs: needs (anchor, positive, negative) rows, one negative "
            "each");
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
