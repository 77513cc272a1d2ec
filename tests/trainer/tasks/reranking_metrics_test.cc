// RerankingMetrics against values worked out by hand from CrossEncoderRerankingEvaluator's
// definitions (np.argsort for mrr@10, sklearn's ndcg_score with tie averaging, and
// average_precision_score over distinct thresholds), and against scikit-learn and numpy
// themselves on 300 random queries full of ties (data/golden/reranking_metric_goldens.json,
// made by data/golden/make_reranking_metric_goldens.py).
#include "trainer/tasks/reranking_metrics.h"

#include <cmath>
#include <fstream>

#include "nlohmann/json.hpp"

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr double kEps = 1e-12;

std::map<std::string, double> One(std::vector<double> scores, std::vector<int> relevant) {
  return RerankingMetrics({{std::move(scores), std::move(relevant)}});
}

TEST(RerankingMetricsTest, PositiveFirstIsPerfect) {
  const auto m = One({0.9, 0.2, 0.5}, {1, 0, 0});
  EXPECT_NEAR(m.at("eval/map"), 1.0, kEps);
  EXPECT_NEAR(m.at("eval/mrr@10"), 1.0, kEps);
  EXPECT_NEAR(m.at("eval/ndcg@10"), 1.0, kEps);
}

TEST(RerankingMetricsTest, TwoPositivesOneRankedLast) {
  // Ranked: p(0.8), n(0.5), n(0.3), p(0.1).
  const auto m = One({0.1, 0.8, 0.5, 0.3}, {1, 1, 0, 0});
  EXPECT_NEAR(m.at("eval/mrr@10"), 1.0, kEps);
  EXPECT_NEAR(m.at("eval/ndcg@10"), (1 + 1 / std::log2(5.0)) / (1 + 1 / std::log2(3.0)), kEps);
  EXPECT_NEAR(m.at("eval/map"), 0.5 * 1.0 + 0.5 * 0.5, kEps);
}

TEST(RerankingMetricsTest, TiesAsNumpyAndSklearn) {
  // The positive ties a negative below the best negative: argsort()[::-1] puts the later
  // index first (mrr 1/3); ndcg averages the tie's gain over ranks 2 and 3; AP takes the tie
  // as one threshold (precision 1/3 at full recall).
  const auto m = One({0.5, 0.5, 0.9}, {1, 0, 0});
  EXPECT_NEAR(m.at("eval/mrr@10"), 1.0 / 3, kEps);
  EXPECT_NEAR(m.at("eval/ndcg@10"), 0.5 * (1 / std::log2(3.0) + 0.5), kEps);
  EXPECT_NEAR(m.at("eval/map"), 1.0 / 3, kEps);
}

TEST(RerankingMetricsTest, OnlyTheTopTenCountForMrrAndNdcg) {
  std::vector<double> scores = {0.0};
  std::vector<int> relevant = {1};
  for (int i = 0; i < 11; ++i) {
    scores.push_back(1.0 + i);
    relevant.push_back(0);
  }
  const auto m = One(scores, relevant);  // the positive ranks 12th
  EXPECT_NEAR(m.at("eval/mrr@10"), 0.0, kEps);
  EXPECT_NEAR(m.at("eval/ndcg@10"), 0.0, kEps);
  EXPECT_NEAR(m.at("eval/map"), 1.0 / 12, kEps);  // average precision is not cut at k
}

TEST(RerankingMetricsTest, AQueryWithoutPositivesCountsZero) {
  const auto m = RerankingMetrics({{{0.9, 0.2}, {1, 0}}, {{0.3, 0.4}, {0, 0}}});
  EXPECT_NEAR(m.at("eval/map"), 0.5, kEps);
  EXPECT_NEAR(m.at("eval/mrr@10"), 0.5, kEps);
  EXPECT_NEAR(m.at("eval/ndcg@10"), 0.5, kEps);
}

TEST(RerankingMetricsTest, KeysNameK) {
  const auto m = RerankingMetrics({{{0.9, 0.2}, {0, 1}}}, /*at_k=*/1);
  EXPECT_EQ(m.count("eval/mrr@1"), 1u);
  EXPECT_EQ(m.count("eval/ndcg@1"), 1u);
  EXPECT_NEAR(m.at("eval/mrr@1"), 0.0, kEps);
  EXPECT_NEAR(m.at("eval/map"), 0.5, kEps);
}

TEST(RerankingMetricsTest, AsScikitLearnAndNumpyOnRandomQueriesWithTies) {
  std::ifstream in("data/golden/reranking_metric_goldens.json");
  ASSERT_TRUE(in) << "data/golden/reranking_metric_goldens.json";
  const nlohmann::json gold = nlohmann::json::parse(in);
  std::vector<RerankedQuery> queries;
  for (const nlohmann::json& q : gold["queries"]) {
    queries.push_back(
        {q["scores"].get<std::vector<double>>(), q["relevant"].get<std::vector<int>>()});
  }
  ASSERT_EQ(queries.size(), 300u);
  for (size_t i = 0; i < queries.size(); ++i) {
    const auto m = RerankingMetrics({queries[i]});
    for (const char* key : {"map", "mrr@10", "ndcg@10"}) {
      EXPECT_NEAR(m.at(std::string("eval/") + key), gold["per_query"][key][i].get<double>(), 1e-12)
          << "query " << i << " " << key;
    }
  }
  const auto m = RerankingMetrics(queries);
  for (const auto& [key, value] : gold["metrics"].items()) {
    EXPECT_NEAR(m.at(key), value.get<double>(), 1e-12) << key;
  }
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
