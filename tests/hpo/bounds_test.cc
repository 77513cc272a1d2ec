// The best point on a bound of its range: each kind of parameter, both sides, and the edge of
// the band.
#include "hpo/bounds.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

SearchSpace Space() { return MixedSpace(); }

std::vector<std::string> Messages(const std::map<std::string, double>& best) {
  std::vector<std::string> out;
  for (const BoundHit& h : BestAtBounds(Space(), best)) out.push_back(h.message);
  return out;
}

TEST(BoundsTest, InsideTheRangeSaysNothing) {
  EXPECT_TRUE(Messages({{"lr", 1e-4},
                        {"batch_size", 32},
                        {"train.weight_decay", 0.05},
                        {"train.epochs", 2},
                        {"model.pooling", 2}})
                  .empty());
}

TEST(BoundsTest, EachKindOnEachSide) {
  EXPECT_EQ(Messages({{"lr", 1e-3},
                      {"batch_size", 128},
                      {"train.weight_decay", 0.0},
                      {"train.epochs", 1},
                      {"model.pooling", 0}}),
            (std::vector<std::string>{
                "best batch_size at the largest value 128: add larger values to "
                "parameters.batch_size.values",
                "best lr at the upper bound 0.001: widen parameters.lr.max",
                "best train.epochs at the lower bound 1: widen parameters.train.epochs.min",
                "best train.weight_decay at the lower bound 0.0: widen "
                "parameters.train.weight_decay.min"}));
  EXPECT_EQ(
      Messages({{"lr", 1e-5}, {"batch_size", 16}}),
      (std::vector<std::string>{"best batch_size at the smallest value 16: add smaller values to "
                                "parameters.batch_size.values",
                                "best lr at the lower bound 1e-05: widen parameters.lr.min"}));
}

TEST(BoundsTest, TheBandIsFivePercentOfTheLogRange) {
  // [1e-5, 1e-3] is two decades; 5% of it is a tenth of a decade below 1e-3.
  const double edge = 1e-3 / std::pow(10.0, 0.1);
  EXPECT_EQ(Messages({{"lr", edge * 1.001}}).size(), 1u);
  EXPECT_TRUE(Messages({{"lr", edge * 0.999}}).empty());
  EXPECT_TRUE(Messages({{"lr", 1e-3 / 2}}).empty());  // a grid step of lr_span 4 below the max
}

TEST(BoundsTest, ShortListsHaveNoBounds) {
  SearchSpace s = Space();
  s["batch_size"].choices = {16, 32};
  EXPECT_TRUE(BestAtBounds(s, {{"batch_size", 32}}).empty());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
