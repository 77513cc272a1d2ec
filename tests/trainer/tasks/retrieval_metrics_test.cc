// Retrieval metrics (sentence-transformers' InformationRetrievalEvaluator.compute_metrics) on
// hand-computed cases: a query with two relevant entries, one with its only relevant entry
// beyond the top 10, one with it outside the hits, one with none (left out); more relevant
// entries than k (ndcg's ideal DCG and map's divisor take min(k, |R|)); the top hits by cosine
// (normalization, ties by index, a corpus smaller than k, query blocks) and the "@d" keys.
#include "trainer/tasks/retrieval_metrics.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

// Hits with the given corpus indices, best first (scores descending).
std::vector<RetrievalHit> Ranked(const std::vector<int64_t>& indices) {
  std::vector<RetrievalHit> hits;
  for (size_t i = 0; i < indices.size(); ++i) {
    hits.push_back({indices[i], 1.0f - 0.001f * static_cast<float>(i)});
  }
  return hits;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> v;
  for (int64_t i = begin; i < end; ++i) v.push_back(i);
  return v;
}

TEST(RetrievalMetrics, KeysAreTheEvaluatorsDefaults) {
  const auto m = RetrievalMetricsFromHits({Ranked({0})}, {{0}});
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "eval/accuracy@1", "eval/accuracy@10", "eval/accuracy@3", "eval/accuracy@5",
                      "eval/map@100", "eval/mrr@10", "eval/ndcg@10", "eval/precision@1",
                      "eval/precision@10", "eval/precision@3", "eval/precision@5", "eval/recall@1",
                      "eval/recall@10", "eval/recall@3", "eval/recall@5"}));
  for (const auto& [k, v] : m) {
    if (k.rfind("eval/precision@", 0) == 0) {
      const int at = std::stoi(k.substr(15));
      EXPECT_DOUBLE_EQ(v, 1.0 / at) << k;
    } else {
      EXPECT_DOUBLE_EQ(v, 1.0) << k;
    }
  }
  const auto at128 = RetrievalMetricsFromHits({Ranked({0})}, {{0}}, "@128");
  EXPECT_EQ(at128.count("eval/ndcg@10@128"), 1u);
  EXPECT_EQ(at128.count("eval/map@100@128"), 1u);
  EXPECT_EQ(at128.size(), m.size());
}

TEST(RetrievalMetrics, TwoRelevantAtRanksTwoAndFive) {
  // Relevant 1 and 4 at ranks 2 and 5.
  const auto m = RetrievalMetricsFromHits({Ranked(Range(0, 12))}, {{4, 1}});
  EXPECT_DOUBLE_EQ(m.at("eval/accuracy@1"), 0.0);
  EXPECT_DOUBLE_EQ(m.at("eval/accuracy@3"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("eval/accuracy@5"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("eval/accuracy@10"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("eval/precision@1"), 0.0);
  EXPECT_DOUBLE_EQ(m.at("eval/precision@3"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.at("eval/precision@5"), 2.0 / 5);
  EXPECT_DOUBLE_EQ(m.at("eval/precision@10"), 2.0 / 10);
  EXPECT_DOUBLE_EQ(m.at("eval/recall@1"), 0.0);
  EXPECT_DOUBLE_EQ(m.at("eval/recall@3"), 0.5);
  EXPECT_DOUBLE_EQ(m.at("eval/recall@5"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("eval/recall@10"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("eval/mrr@10"), 0.5);
  const double dcg = 1 / std::log2(3.0) + 1 / std::log2(6.0);
  const double idcg = 1 / std::log2(2.0) + 1 / std::log2(3.0);
  EXPECT_DOUBLE_EQ(m.at("eval/ndcg@10"), dcg / idcg);
  EXPECT_DOUBLE_EQ(m.at("eval/map@100"), (1.0 / 2 + 2.0 / 5) / 2);
}

TEST(RetrievalMetrics, NoneRelevantInTopTenAveragedWithAnotherQuery) {
  // Query 0: relevant 4 at rank 1. Query 1: relevant 20 at rank 15 (nothing in the top 10).
  // Query 2: relevant 99, not among its hits. Query 3: nothing relevant, left out.
  std::vector<int64_t> second = Range(0, 30);
  std::swap(second[14], second[20]);  // index 20 at rank 15
  const auto m = RetrievalMetricsFromHits(
      {Ranked({4, 5, 6}), Ranked(second), Ranked(Range(0, 30)), Ranked(Range(0, 30))},
      {{4}, {20}, {99}, {}});
  EXPECT_DOUBLE_EQ(m.at("eval/accuracy@1"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.at("eval/accuracy@10"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.at("eval/precision@1"), 1.0 / 3);
  // Query 0 has 3 hits: precision@10 still divides by 10.
  EXPECT_DOUBLE_EQ(m.at("eval/precision@10"), (0.1 + 0 + 0) / 3);
  EXPECT_DOUBLE_EQ(m.at("eval/recall@10"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.at("eval/mrr@10"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.at("eval/ndcg@10"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m.at("eval/map@100"), (1.0 + 1.0 / 15 + 0) / 3);
}

TEST(RetrievalMetrics, MoreRelevantThanK) {
  // 12 relevant (0..11), the first ten hits all relevant: ndcg@10 is 1 (the ideal DCG counts
  // min(10, 12) entries); recall@10 10/12; map@100 over 12 relevant hits in the first 12 / 12.
  const auto m = RetrievalMetricsFromHits({Ranked(Range(0, 100))}, {Range(0, 12)});
  EXPECT_DOUBLE_EQ(m.at("eval/ndcg@10"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("eval/recall@10"), 10.0 / 12);
  EXPECT_DOUBLE_EQ(m.at("eval/precision@10"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("eval/map@100"), 1.0);
  // 150 relevant, the 100 hits all relevant: map divides by min(100, 150).
  const auto wide = RetrievalMetricsFromHits({Ranked(Range(0, 100))}, {Range(0, 150)});
  EXPECT_DOUBLE_EQ(wide.at("eval/map@100"), 1.0);
  EXPECT_DOUBLE_EQ(wide.at("eval/recall@10"), 10.0 / 150);
  // Hits at ranks 1 and 3 of 3 relevant: ndcg@10 = (1 + 1/2) / (1 + 1/log2(3) + 1/2).
  const auto partial = RetrievalMetricsFromHits({Ranked({7, 0, 8, 1, 2})}, {{7, 8, 9}});
  EXPECT_DOUBLE_EQ(partial.at("eval/ndcg@10"), (1.0 + 0.5) / (1.0 + 1 / std::log2(3.0) + 0.5));
  EXPECT_DOUBLE_EQ(partial.at("eval/map@100"), (1.0 + 2.0 / 3) / 3);
  // A relevant index listed twice is one entry (relevant_docs is a set).
  const auto twice = RetrievalMetricsFromHits({Ranked({7, 0})}, {{7, 7}});
  EXPECT_DOUBLE_EQ(twice.at("eval/recall@1"), 1.0);
}

TEST(TopRetrievalHits, CosineBestFirstTiesByIndex) {
  // Scores of query (1, 0): 1, 1, 0, 1, 0 (a zero vector: cos 0, as F.normalize's eps gives),
  // 0.6 (0.6, 0.8).
  const torch::Tensor q = torch::tensor({{1.0f, 0.0f}});
  const torch::Tensor c = torch::tensor(
      {{1.0f, 0.0f}, {2.0f, 0.0f}, {0.0f, 1.0f}, {3.0f, 0.0f}, {0.0f, 0.0f}, {0.6f, 0.8f}});
  auto top2 = TopRetrievalHits(q, c, 2);
  ASSERT_EQ(top2.size(), 1u);
  ASSERT_EQ(top2[0].size(), 2u);
  EXPECT_EQ(top2[0][0].index, 0);
  EXPECT_EQ(top2[0][1].index, 1);  // not 3: equal scores go by index
  EXPECT_FLOAT_EQ(top2[0][0].score, 1.0f);
  auto all = TopRetrievalHits(q, c, 100);  // k above the corpus size: all of it
  ASSERT_EQ(all[0].size(), 6u);
  std::vector<int64_t> order;
  for (const RetrievalHit& h : all[0]) order.push_back(h.index);
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 3, 5, 2, 4}));
  EXPECT_NEAR(all[0][3].score, 0.6f, 1e-6);
  EXPECT_EQ(all[0][5].score, 0.0f);
}

TEST(TopRetrievalHits, ManyTiesAtTheCut) {
  // 150 equal entries: the top 100 are the first 100 indices, in order.
  const torch::Tensor q = torch::tensor({{1.0f, 2.0f}, {-1.0f, 0.5f}});
  const torch::Tensor c = torch::ones({150, 2});
  auto hits = TopRetrievalHits(q, c);
  for (const auto& row : hits) {
    ASSERT_EQ(row.size(), 100u);
    for (int64_t i = 0; i < 100; ++i) ASSERT_EQ(row[i].index, i);
  }
}

TEST(TopRetrievalHits, QueryBlocksGiveTheSameHits) {
  // 2^25 / C rows a block: with C = 2^19 + 1, blocks of 63 queries.
  torch::manual_seed(3);
  const torch::Tensor q = torch::randn({70, 4});
  const torch::Tensor c = torch::randn({(1 << 19) + 1, 4});
  const auto blocked = TopRetrievalHits(q, c, 5);
  const torch::Tensor scores =
      torch::nn::functional::normalize(q, torch::nn::functional::NormalizeFuncOptions().dim(1))
          .mm(torch::nn::functional::normalize(c,
                                               torch::nn::functional::NormalizeFuncOptions().dim(1))
                  .t());
  const auto [values, indices] = scores.topk(5, 1);
  ASSERT_EQ(blocked.size(), 70u);
  for (int64_t r = 0; r < 70; ++r) {
    for (int64_t j = 0; j < 5; ++j) {
      EXPECT_EQ(blocked[r][j].index, indices[r][j].item<int64_t>()) << r << " " << j;
    }
  }
}

TEST(RetrievalMetrics, FromEmbeddingsWithTruncation) {
  // q0 (1, 0) ranks c0 (1, .1), c2 (1, 1), c1 (.1, 1): its relevant c1 is third. q1 (0, 1) ranks
  // c1 first. q2 has nothing relevant: left out.
  const torch::Tensor q = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}});
  const torch::Tensor c = torch::tensor({{1.0f, 0.1f}, {0.1f, 1.0f}, {1.0f, 1.0f}});
  const std::vector<std::vector<int64_t>> relevant = {{1}, {1}, {}};
  const auto m = RetrievalMetrics(q, c, relevant);
  EXPECT_DOUBLE_EQ(m.at("eval/accuracy@1"), 0.5);
  EXPECT_DOUBLE_EQ(m.at("eval/accuracy@3"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("eval/mrr@10"), (1.0 / 3 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(m.at("eval/map@100"), (1.0 / 3 + 1.0) / 2);
  // The first component only: q0's scores all 1, q1's all 0 (a zero vector): ties, by index, so
  // c1 is second for both.
  const auto d1 = RetrievalMetrics(q.narrow(1, 0, 1), c.narrow(1, 0, 1), relevant, "@1");
  EXPECT_DOUBLE_EQ(d1.at("eval/mrr@10@1"), 0.5);
  EXPECT_DOUBLE_EQ(d1.at("eval/accuracy@1@1"), 0.0);
  EXPECT_DOUBLE_EQ(d1.at("eval/recall@3@1"), 1.0);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
