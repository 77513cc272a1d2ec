// The retrieval evaluation (trainer/tasks/retrieval_evaluator.h, through Evaluate's EvalSet entry
// point) of a small random encoder on the CPU: the same metrics as each text embedded alone and
// scored by trainer/tasks/retrieval_metrics.h, the matryoshka "@d" keys (retrieval and
// similarity), a dim above the width refused, and the model's train mode kept; two Gloo ranks
// (forked; this test runs first, before LibTorch starts its thread pools) return the same
// metrics as one process.
#include "trainer/tasks/retrieval_evaluator.h"

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
#include "trainer/data/retrieval_data.h"
#include "trainer/data/task_data.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/tasks/evaluator.h"
#include "trainer/tasks/loss_registry.h"
#include "trainer/tasks/retrieval_metrics.h"

namespace tunefleet {
namespace trainer {
namespace {

struct Fixture {
  std::shared_ptr<const Tokenizer> tokenizer;
  TaskModel model{nullptr};
  std::vector<Example> rows;  // the first 60 rows of STS-B dev
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
  f.model = TaskModel(BertModel(c), Pooling::kMean, MakeTask("sts").value(), 0);
  auto rows = ReadStsb("data/stsbenchmark/sts-dev.csv");
  EXPECT_TRUE(rows.ok()) << rows.status();
  f.rows.assign(rows->begin(), rows->begin() + 60);
  return f;
}

// Each text embedded alone (a batch of one, no padding), in eval mode.
torch::Tensor EmbedEach(TaskModel& model, const std::vector<Encoding>& texts) {
  torch::NoGradGuard no_grad;
  model->eval();
  std::vector<torch::Tensor> rows;
  for (const Encoding& e : texts) {
    PaddedBatch p = PadBatch({e});
    TextBatch b;
    b.input_ids = torch::tensor(p.input_ids, torch::kLong).view({1, p.cols});
    b.token_type_ids = torch::tensor(p.token_type_ids, torch::kLong).view({1, p.cols});
    b.attention_mask = torch::tensor(p.attention_mask, torch::kLong).view({1, p.cols});
    b.padded = false;
    rows.push_back(model->Embed(b));
  }
  model->train();
  return torch::cat(rows);
}

std::unique_ptr<EvalSet> RetrievalEval(const Fixture& f) {
  auto set = RetrievalFromPairs(f.rows, "sts-dev");
  EXPECT_TRUE(set.ok()) << set.status();
  auto eval = std::make_unique<EvalSet>();
  eval->retrieval = std::make_unique<RetrievalData>(
      TokenizeRetrieval(*std::move(set), *f.tokenizer, 128, "sts-dev"));
  return eval;
}

// Each rank: the metrics with the group against those of one process, and against the other
// rank's (their sums over the ranks are twice its own).
int TwoRanksAsOne(comm::ProcessGroup& group) {
  Fixture f = Make();
  const std::unique_ptr<EvalSet> eval = RetrievalEval(f);
  auto alone = Evaluate(f.model, *eval, torch::kCPU, 5, Precision::kFp32, nullptr, {16});
  auto ranked = Evaluate(f.model, *eval, torch::kCPU, 5, Precision::kFp32, &group, {16});
  if (!alone.ok() || !ranked.ok()) {
    std::fprintf(stderr, "rank %d: %s %s\n", group.rank(), alone.status().ToString().c_str(),
                 ranked.status().ToString().c_str());
    return 1;
  }
  int failures = alone->size() == 30 && ranked->size() == 30 ? 0 : 1;
  std::vector<double> values;
  for (const auto& [key, value] : *alone) {
    const auto it = ranked->find(key);
    if (it == ranked->end() || std::abs(it->second - value) > 1e-9) {
      std::fprintf(stderr, "rank %d: %s %.17g alone, %.17g with 2 ranks\n", group.rank(),
                   key.c_str(), value, it == ranked->end() ? -1.0 : it->second);
      ++failures;
    }
    values.push_back(it == ranked->end() ? 0.0 : it->second);
  }
  torch::Tensor sum = torch::tensor(values, torch::kDouble);
  if (!group.AllReduceSum(sum).ok()) return failures + 1;
  if (!torch::equal(sum, torch::tensor(values, torch::kDouble) * 2)) {
    std::fprintf(stderr, "rank %d: the ranks' metrics differ\n", group.rank());
    ++failures;
  }
  return failures;
}

TEST(EvaluateRetrieval, TwoGlooRanksAsOneProcess) {
  if (!comm::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "this LibTorch has no Gloo";
  EXPECT_EQ(RunForkedRanks(2, TwoRanksAsOne), std::vector<int>(2, 0));
}

TEST(EvaluateRetrieval, AsEachTextEmbeddedAloneWithDims) {
  Fixture f = Make();
  const std::unique_ptr<EvalSet> owned = RetrievalEval(f);
  const EvalSet& eval = *owned;
  EXPECT_EQ(eval.size(), static_cast<int64_t>(eval.retrieval->set.queries.size()));
  const RetrievalData& data = *eval.retrieval;
  ASSERT_GT(data.corpus.size(), 50u);

  f.model->train();
  auto metrics = Evaluate(f.model, eval, torch::kCPU, 7, Precision::kFp32, nullptr, {8, 32});
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(f.model->is_training());
  EXPECT_EQ(metrics->size(), 3u * 15u);

  const torch::Tensor q = EmbedEach(f.model, data.queries);
  const torch::Tensor c = EmbedEach(f.model, data.corpus);
  auto want = RetrievalMetrics(q, c, data.set.relevant);
  const auto at8 = RetrievalMetrics(q.narrow(1, 0, 8), c.narrow(1, 0, 8), data.set.relevant, "@8");
  const auto at32 = RetrievalMetrics(q, c, data.set.relevant, "@32");
  want.insert(at8.begin(), at8.end());
  want.insert(at32.begin(), at32.end());
  for (const auto& [key, value] : want) {
    ASSERT_EQ(metrics->count(key), 1u) << key;
    EXPECT_NEAR(metrics->at(key), value, 1e-9) << key;
  }
  EXPECT_GT(metrics->at("eval/ndcg@10"), 0.0);
  EXPECT_EQ(metrics->at("eval/ndcg@10"), metrics->at("eval/ndcg@10@32"));

  auto too_wide = Evaluate(f.model, eval, torch::kCPU, 7, Precision::kFp32, nullptr, {64});
  ASSERT_FALSE(too_wide.ok());
  EXPECT_EQ(too_wide.status().message(),
            "retrieval evaluation on sts-dev: matryoshka dim 64 is outside [1, the embedding "
            "width 32]");
}

TEST(EvaluateSimilarity, MatryoshkaDimsKeys) {
  Fixture f = Make();
  auto data = TaskData::Make(DataKind{"sts", RowTarget::kScore}, f.rows, "stsb", *f.tokenizer, 128,
                             "sts-dev");
  ASSERT_TRUE(data.ok()) << data.status();
  auto plain = Evaluate(f.model, *data, torch::kCPU, 16, Precision::kFp32);
  auto dims = Evaluate(f.model, *data, torch::kCPU, 16, Precision::kFp32, nullptr, {4, 32});
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(dims.ok()) << dims.status();
  EXPECT_EQ(plain->size(), 2u);
  ASSERT_EQ(dims->size(), 6u);
  EXPECT_EQ(dims->at("eval/spearman"), plain->at("eval/spearman"));
  EXPECT_EQ(dims->at("eval/spearman@32"), plain->at("eval/spearman"));
  EXPECT_EQ(dims->at("eval/pearson@32"), plain->at("eval/pearson"));
  EXPECT_NE(dims->at("eval/spearman@4"), plain->at("eval/spearman"));
  EXPECT_EQ(dims->count("eval/pearson@4"), 1u);
  auto bad = Evaluate(f.model, *data, torch::kCPU, 16, Precision::kFp32, nullptr, {0});
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
