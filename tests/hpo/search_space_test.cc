#include "hpo/search_space.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(SearchSpaceTest, OptunaJsonShapes) {
  SearchSettings c;
  c.lr = {"lr", "log_uniform", 1e-5, 1e-3, {}};
  c.batch_sizes = {16, 32};
  SearchSpace space = BuildSearchSpace(c);
  EXPECT_EQ(space[kLrParam].ToOptunaJson(),
            "{\"name\": \"FloatDistribution\", \"attributes\": {\"step\": null, \"low\": 1e-05, "
            "\"high\": 0.001, \"log\": true}}");
  EXPECT_EQ(space[kBatchParam].ToOptunaJson(),
            "{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [16, 32]}}");
  EXPECT_EQ(space[kBatchParam].ToInternal(32), 1);
  EXPECT_EQ(space[kBatchParam].ToExternal(0), 16);
  EXPECT_EQ(space[kLrParam].Describe(), "log_uniform [1e-05, 0.001]");
}

TEST(SearchSpaceTest, CategoricalLr) {
  SearchSettings c;
  c.lr = {"lr", "categorical", 1e-5, 1e-4, {1e-5, 3e-5, 1e-4}};
  c.batch_sizes = {8};
  SearchSpace space = BuildSearchSpace(c);
  EXPECT_EQ(space[kLrParam].kind, Distribution::Kind::kCategorical);
  EXPECT_TRUE(space[kLrParam].Contains(3e-5));
  EXPECT_FALSE(space[kLrParam].Contains(2e-5));
  EXPECT_EQ(space[kLrParam].ToOptunaJson(),
            "{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [1e-05, 3e-05, "
            "0.0001]}}");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
