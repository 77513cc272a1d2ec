// Pearson / Spearman / AverageRanks (trainer/tasks/correlation.h) against values worked out by hand
// that scipy.stats.pearsonr, spearmanr and rankdata (method "average") give, against a
// long-double one-pass Pearson formula on random data, and NaN for constant series, length
// mismatches and fewer than 2 points.
#include "trainer/tasks/correlation.h"

#include <cmath>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::ElementsAre;

// Pearson's r by the one-pass sums formula in long double: an independent reference.
double ReferencePearson(const std::vector<double>& x, const std::vector<double>& y) {
  long double n = x.size(), sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += static_cast<long double>(x[i]) * x[i];
    syy += static_cast<long double>(y[i]) * y[i];
    sxy += static_cast<long double>(x[i]) * y[i];
  }
  return static_cast<double>((n * sxy - sx * sy) /
                             std::sqrt((n * sxx - sx * sx) * (n * syy - sy * sy)));
}

TEST(AverageRanksTest, TiesShareTheirAverageRank) {
  // scipy.stats.rankdata([10, 20, 20, 30]) = [1, 2.5, 2.5, 4]
  EXPECT_THAT(AverageRanks({10, 20, 20, 30}), ElementsAre(1.0, 2.5, 2.5, 4.0));
}

TEST(AverageRanksTest, UnsortedInput) {
  // rankdata([3, 1, 4, 1, 5, 9, 2, 6]) = [4, 1.5, 5, 1.5, 6, 8, 3, 7]
  EXPECT_THAT(AverageRanks({3, 1, 4, 1, 5, 9, 2, 6}),
              ElementsAre(4.0, 1.5, 5.0, 1.5, 6.0, 8.0, 3.0, 7.0));
  // rankdata([2, 2, 2, 1, 3, 3]) = [3, 3, 3, 1, 5.5, 5.5]
  EXPECT_THAT(AverageRanks({2, 2, 2, 1, 3, 3}), ElementsAre(3.0, 3.0, 3.0, 1.0, 5.5, 5.5));
  // Descending, negative values.
  EXPECT_THAT(AverageRanks({0.5, -1.0, -2.5}), ElementsAre(3.0, 2.0, 1.0));
}

TEST(AverageRanksTest, AllEqualAndEdgeSizes) {
  EXPECT_THAT(AverageRanks({7, 7, 7, 7}), ElementsAre(2.5, 2.5, 2.5, 2.5));
  EXPECT_THAT(AverageRanks({42}), ElementsAre(1.0));
  EXPECT_TRUE(AverageRanks({}).empty());
}

TEST(PearsonTest, HandComputed) {
  // x = [1..5], y = [2, 4, 5, 4, 5]: sxy = 6, sxx = 10, syy = 6 -> r = 6 / sqrt(60).
  EXPECT_NEAR(Pearson({1, 2, 3, 4, 5}, {2, 4, 5, 4, 5}), 6.0 / std::sqrt(60.0), 1e-14);
  EXPECT_NEAR(Pearson({1, 2, 3, 4, 5}, {2, 4, 5, 4, 5}), 0.7745966692414834, 1e-14);
  // Exactly linear: +-1; invariant under positive affine maps.
  EXPECT_NEAR(Pearson({1, 2, 3, 4}, {3, 5, 7, 9}), 1.0, 1e-15);
  EXPECT_NEAR(Pearson({1, 2, 3, 4}, {9, 7, 5, 3}), -1.0, 1e-15);
  EXPECT_NEAR(Pearson({10, 20, 30, 40, 50}, {2, 4, 5, 4, 5}), 0.7745966692414834, 1e-14);
  // Two points: always +-1.
  EXPECT_NEAR(Pearson({0, 1}, {5, 3}), -1.0, 1e-15);
  // Uncorrelated: x = [-1, 0, 1], y = [1, -2, 1] -> sxy = 0.
  EXPECT_NEAR(Pearson({-1, 0, 1}, {1, -2, 1}), 0.0, 1e-15);
}

TEST(PearsonTest, MatchesSumsFormulaOnRandomData) {
  std::mt19937_64 rng(17);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> x(50 + trial), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = 3.0 + normal(rng);
      y[i] = 0.3 * x[i] + normal(rng);
    }
    EXPECT_NEAR(Pearson(x, y), ReferencePearson(x, y), 1e-12) << trial;
  }
}

TEST(PearsonTest, NaNForConstantOrMismatchedOrShort) {
  EXPECT_TRUE(std::isnan(Pearson({1, 1, 1}, {1, 2, 3})));
  EXPECT_TRUE(std::isnan(Pearson({1, 2, 3}, {4, 4, 4})));
  EXPECT_TRUE(std::isnan(Pearson({1, 2, 3}, {1, 2})));
  EXPECT_TRUE(std::isnan(Pearson({1}, {1})));
  EXPECT_TRUE(std::isnan(Pearson({}, {})));
}

// A constant series whose mean is not exactly representable, e.g. [0.1, 0.1, 0.1] (mean
// 0.10000000000000002), has tiny nonzero deviations; Pearson must still say NaN, as
// scipy.stats.pearsonr does ((x == x[0]).all()). This test found that bug.
TEST(PearsonTest, NaNForConstantSeriesWithInexactMean) {
  const double a = Pearson({0.1, 0.1, 0.1}, {1, 2, 3});
  const double b = Pearson({1, 2, 3}, {0.7, 0.7, 0.7});
  const double c = Pearson({0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, {1, 5, 2, 8, 3, 9, 4});
  EXPECT_TRUE(std::isnan(a)) << "Pearson([0.1] * 3, [1, 2, 3]) = " << a;
  EXPECT_TRUE(std::isnan(b)) << "Pearson([1, 2, 3], [0.7] * 3) = " << b;
  EXPECT_TRUE(std::isnan(c)) << "Pearson([0.1] * 7, [1, 5, 2, 8, 3, 9, 4]) = " << c;
  EXPECT_TRUE(std::isnan(Spearman({0.1, 0.1, 0.1}, {1, 2, 3})));
}

TEST(SpearmanTest, MonotoneNonlinearIsOne) {
  std::vector<double> x, y, z;
  for (int i = 1; i <= 8; ++i) {
    x.push_back(i);
    y.push_back(std::exp(i));
    z.push_back(-std::pow(i, 3));
  }
  EXPECT_DOUBLE_EQ(Spearman(x, y), 1.0);
  EXPECT_DOUBLE_EQ(Spearman(x, z), -1.0);
  EXPECT_LT(Pearson(x, y), 0.95);  // but not linear
}

TEST(SpearmanTest, TiesHandComputed) {
  // x = [1..5] ranks [1..5]; y = [1, 2, 2, 3, 1] ranks [1.5, 3.5, 3.5, 5, 1.5] (mean 3):
  // sxy = 3 - 0.5 + 0 + 2 - 3 = 1.5, sxx = 10, syy = 9 -> rho = 1.5 / sqrt(90) (scipy: 0.158114).
  EXPECT_NEAR(Spearman({1, 2, 3, 4, 5}, {1, 2, 2, 3, 1}), 1.5 / std::sqrt(90.0), 1e-14);
  EXPECT_NEAR(Spearman({1, 2, 3, 4, 5}, {1, 2, 2, 3, 1}), 0.15811388300841897, 1e-14);
  // Ties on both sides: ranks [1.5, 1.5, 3, 4] and [1, 2.5, 2.5, 4]:
  // sxy = 3.75, sxx = syy = 4.5 -> rho = 5 / 6.
  EXPECT_NEAR(Spearman({1, 1, 2, 3}, {1, 2, 2, 3}), 5.0 / 6.0, 1e-14);
  // Unsorted with ties: x = [3, 1, 4, 1, 5], y = [9, 2, 6, 5, 3] ->
  // rx = [3, 1.5, 4, 1.5, 5], ry = [5, 1, 4, 3, 2] (both mean 3);
  // rx - 3 = [0, -1.5, 1, -1.5, 2], ry - 3 = [2, -2, 1, 0, -1]:
  // sxy = 0 + 3 + 1 + 0 - 2 = 2, sxx = 0 + 2.25 + 1 + 2.25 + 4 = 9.5, syy = 10.
  EXPECT_NEAR(Spearman({3, 1, 4, 1, 5}, {9, 2, 6, 5, 3}), 2.0 / std::sqrt(95.0), 1e-14);
}

TEST(SpearmanTest, NaNForConstantOrMismatchedOrShort) {
  EXPECT_TRUE(std::isnan(Spearman({2, 2, 2, 2}, {1, 2, 3, 4})));
  EXPECT_TRUE(std::isnan(Spearman({1, 2, 3, 4}, {0, 0, 0, 0})));
  EXPECT_TRUE(std::isnan(Spearman({1, 2, 3}, {1, 2, 3, 4})));
  EXPECT_TRUE(std::isnan(Spearman({1}, {2})));
  EXPECT_TRUE(std::isnan(Spearman({}, {})));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
