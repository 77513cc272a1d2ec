// task.type contrastive (trainer/tasks/contrastive_loss.h): OnlineContrastiveLoss against values
// worked out by hand and against a double-precision transcription of sentence-transformers'
// forward, its gradients, and its YAML key task.margin.
#include "trainer/tasks/contrastive_loss.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/config/train_config.h"
#include "trainer/tasks/loss_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

torch::Tensor Rows(const std::vector<std::vector<float>>& rows) {
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return torch::tensor(flat).reshape(
      {static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())});
}

// Every a is (1, 0); the b's make distances 1 - cos of 0, 1, 0.4 and 2:
//   (1, 0): cos 1;  (0, 1): cos 0;  (0.6, 0.8): cos 0.6;  (-1, 0): cos -1.
// Labels 1, 1, 0, 0: positives d = {0, 1}, negatives d = {0.4, 2}.
//   Two positives, so a hard negative has d < max(positives) = 1: only 0.4.
//   Two negatives, so a hard positive has d > min(negatives) = 0.4: only 1.
//   loss = 1^2 + relu(0.5 - 0.4)^2 = 1 + 0.01 = 1.01.
// Gradients (d = 1 - cos, and for unit vectors dcos/db = a - cos b, dcos/da = b - cos a):
//   pair 1 (hard positive, dL/dd = 2 d = 2, dL/dcos = -2):
//     dL/db = -2 (1, 0) = (-2, 0);          dL/da = -2 (0, 1) = (0, -2)
//   pair 2 (hard negative, dL/dd = -2 (0.5 - 0.4) = -0.2, dL/dcos = 0.2):
//     dcos/db = (1, 0) - 0.6 (0.6, 0.8) = (0.64, -0.48), so dL/db = (0.128, -0.096);
//     dcos/da = (0.6, 0.8) - 0.6 (1, 0) = (0, 0.8),       so dL/da = (0, 0.16)
//   pairs 0 and 3 are not hard: no gradient.
TEST(OnlineContrastiveLossTest, HandWorkedBatch) {
  torch::Tensor a = Rows({{1, 0}, {1, 0}, {1, 0}, {1, 0}}).requires_grad_(true);
  torch::Tensor b = Rows({{1, 0}, {0, 1}, {0.6f, 0.8f}, {-1, 0}}).requires_grad_(true);
  const torch::Tensor labels = torch::tensor({1, 1, 0, 0}, torch::kLong);
  torch::Tensor loss = OnlineContrastiveLoss(a, b, labels);
  EXPECT_NEAR(loss.item<double>(), 1.01, 1e-5);
  loss.backward();
  const std::vector<float> want_b = {0, 0, -2, 0, 0.128f, -0.096f, 0, 0};
  const std::vector<float> want_a = {0, 0, 0, -2, 0, 0.16f, 0, 0};
  const torch::Tensor gb = b.grad().contiguous(), ga = a.grad().contiguous();
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(gb.data_ptr<float>()[i], want_b[i], 1e-5) << "dL/db element " << i;
    EXPECT_NEAR(ga.data_ptr<float>()[i], want_a[i], 1e-5) << "dL/da element " << i;
  }
  // A larger margin: the hard negative's term is (1 - 0.4)^2 = 0.36; 2 stays easy (not < 1).
  EXPECT_NEAR(OnlineContrastiveLoss(a, b, labels, 1.0).item<double>(), 1.36, 1e-5);
}

// The reference's fallbacks for fewer than two of a kind.
TEST(OnlineContrastiveLossTest, FewerThanTwoOfAKind) {
  // One positive (d 0.4), negatives d = 1 and 0.2 (b = (0, 1) and (0.8, 0.6)).
  //   One positive: a hard negative has d < mean(negatives) = 0.6: only 0.2, relu(0.3)^2 = 0.09.
  //   Two negatives: a hard positive has d > min(negatives) = 0.2: 0.4, 0.4^2 = 0.16.
  const torch::Tensor a = Rows({{1, 0}, {1, 0}, {1, 0}});
  const torch::Tensor b = Rows({{0.6f, 0.8f}, {0, 1}, {0.8f, 0.6f}});
  EXPECT_NEAR(OnlineContrastiveLoss(a, b, torch::tensor({1, 0, 0}, torch::kLong)).item<double>(),
              0.25, 1e-5);
  // Positives only (d = 0 and 1): a hard positive has d > mean(positives) = 0.5: 1^2 = 1.
  EXPECT_NEAR(OnlineContrastiveLoss(Rows({{1, 0}, {1, 0}}), Rows({{1, 0}, {0, 1}}),
                                    torch::tensor({1, 1}, torch::kLong))
                  .item<double>(),
              1.0, 1e-5);
  // Negatives only (d = 0.4 and 2): a hard negative has d < mean(negatives) = 1.2:
  // relu(0.5 - 0.4)^2 = 0.01.
  EXPECT_NEAR(OnlineContrastiveLoss(Rows({{1, 0}, {1, 0}}), Rows({{0.6f, 0.8f}, {-1, 0}}),
                                    torch::tensor({0, 0}, torch::kLong))
                  .item<double>(),
              0.01, 1e-5);
}

// sentence-transformers' forward, transcribed into doubles and loops.
double Reference(const std::vector<std::vector<double>>& a,
                 const std::vector<std::vector<double>>& b, const std::vector<int>& labels,
                 double margin) {
  std::vector<double> poss, negs;
  for (size_t i = 0; i < a.size(); ++i) {
    double dot = 0, na = 0, nb = 0;
    for (size_t k = 0; k < a[i].size(); ++k) {
      dot += a[i][k] * b[i][k];
      na += a[i][k] * a[i][k];
      nb += b[i][k] * b[i][k];
    }
    const double d = 1 - dot / (std::sqrt(na) * std::sqrt(nb));
    (labels[i] == 1 ? poss : negs).push_back(d);
  }
  auto mean = [](const std::vector<double>& v) {
    return v.empty() ? std::numeric_limits<double>::quiet_NaN()
                     : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  };
  const double neg_below =
      poss.size() > 1 ? *std::max_element(poss.begin(), poss.end()) : mean(negs);
  const double pos_above =
      negs.size() > 1 ? *std::min_element(negs.begin(), negs.end()) : mean(poss);
  double loss = 0;
  for (double d : poss) {
    if (d > pos_above) loss += d * d;
  }
  for (double d : negs) {
    if (d < neg_below) loss += std::pow(std::max(0.0, margin - d), 2);
  }
  return loss;
}

TEST(OnlineContrastiveLossTest, MatchesTheReferenceOnRandomBatches) {
  torch::manual_seed(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 2 + trial % 9, h = 8;
    const torch::Tensor a = torch::randn({n, h}, torch::kDouble);
    const torch::Tensor b = torch::randn({n, h}, torch::kDouble);
    const torch::Tensor labels = torch::randint(0, 2, {n}, torch::kLong);
    std::vector<std::vector<double>> va(n), vb(n);
    std::vector<int> vl(n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < h; ++k) {
        va[i].push_back(a[i][k].item<double>());
        vb[i].push_back(b[i][k].item<double>());
      }
      vl[i] = static_cast<int>(labels[i].item<int64_t>());
    }
    const double margin = trial % 2 == 0 ? 0.5 : 1.3;
    EXPECT_NEAR(OnlineContrastiveLoss(a, b, labels, margin).item<double>(),
                Reference(va, vb, vl, margin), 1e-4)
        << "trial " << trial;
  }
}

class ContrastiveYamlTest : public ::testing::Test {
 protected:
  void SetUp() override { SetTaskSectionReader(&LossRegistryReader()); }
  void TearDown() override { SetTaskSectionReader(nullptr); }
  std::string path_ = ::testing::TempDir() + "/contrastive.yaml";
  absl::StatusOr<TrainerConfig> Load(const std::string& task) {
    std::ofstream(path_) << "model: {path: m}\n" << task << "\ntrain: {epochs: 1}\n";
    return LoadTrainerConfig(path_);
  }
  std::string Error(const std::string& task) {
    auto c = Load(task);
    return c.ok() ? "" : std::string(c.status().message());
  }
};

TEST_F(ContrastiveYamlTest, MarginIsReadAndChecked) {
  const std::string base = "task: {type: contrastive, train: data/paws-wiki/dev.tsv, format: paws";
  auto fallback = Load(base + "}");
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  ASSERT_NE(fallback->task.settings, nullptr);
  EXPECT_EQ(fallback->task.settings->Values(),
            (std::vector<std::pair<std::string, std::string>>{{"margin", "0.5"}}));
  auto set = Load(base + ", margin: 0.3}");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->task.settings->Values()[0].second, "0.3");
  auto task = MakeTask(set->task);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->type(), "contrastive");
  EXPECT_EQ((*task)->Describe(), "OnlineContrastiveLoss (margin 0.3, cosine distance)");
  EXPECT_EQ((*task)->train_data().target, RowTarget::kBinaryLabel);
  EXPECT_FALSE((*task)->has_head());

  EXPECT_EQ(Error(base + ", margin: -1}"), path_ + ":2: task.margin: must be a number > 0, got -1");
  EXPECT_EQ(Error(base + ", margin: 0}"), path_ + ":2: task.margin: must be a number > 0, got 0");
  EXPECT_EQ(Error(base + ", margin: wide}"),
            path_ + ":2: task.margin: expected a number, got 'wide'");
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, margin: 0.5}"),
            path_ +
                ":2: task.margin: only applies to task.loss contrastive, triplet, gist and "
                "cached_gist");
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
