// trainer/distributed/grad_sync.h in one process (a Gloo group of one rank over loopback): buckets
// hold the parameters in reverse order, the first at most 1 MiB, the others at most the cap, each
// parameter exactly once; gradients are views into the buckets, accumulate across backward
// passes, and after Finish() hold the mean over ranks (here: themselves); set_sync(false)
// communicates nothing and Finish() still completes. The multi-rank behaviour is checked
// against one process in tests/integration/ddp_test.sh.
#include "trainer/distributed/grad_sync.h"

#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

std::unique_ptr<comm::ProcessGroup> OneRank() {
  comm::DistEnv env;
  env.master_addr = "127.0.0.1";
  env.master_port = 0;  // TCPStore picks a free port for a lone server
  auto g = comm::ProcessGroup::Connect(env, comm::ProcessGroup::Backend::kGloo,
                                       std::chrono::seconds(30));
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : nullptr;
}

TEST(GradSync, BucketsAndViews) {
  auto group = OneRank();
  ASSERT_NE(group, nullptr);
  torch::manual_seed(0);
  // 600 KiB, 600 KiB, 2 MiB, 4 KiB: reverse order -> [4 KiB, 2 MiB?]: the first bucket takes
  // parameters until 1 MiB would be exceeded.
  std::vector<torch::Tensor> params = {
      torch::randn({150 * 1024}).requires_grad_(), torch::randn({150 * 1024}).requires_grad_(),
      torch::randn({512 * 1024}).requires_grad_(), torch::randn({1024}).requires_grad_()};
  GradSync sync(group.get(), params, /*bucket_bytes=*/3 * 1024 * 1024);
  ASSERT_EQ(sync.num_buckets(), 3);
  EXPECT_EQ(sync.bucket_params(0), (std::vector<size_t>{3}));     // 4 KiB, then 2 MiB > 1 MiB
  EXPECT_EQ(sync.bucket_params(1), (std::vector<size_t>{2, 1}));  // 2 MiB + 600 KiB <= 3 MiB
  EXPECT_EQ(sync.bucket_params(2), (std::vector<size_t>{0}));
  for (const torch::Tensor& p : params) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().sizes(), p.sizes());
  }

  // Two accumulation micro-steps, the second synchronizing.
  auto loss = [&] {
    torch::Tensor l = torch::zeros({});
    for (size_t i = 0; i < params.size(); ++i)
      l = l + (params[i] * static_cast<double>(i + 1)).sum();
    return l;
  };
  sync.ZeroGrads();
  sync.set_sync(false);
  loss().backward();
  sync.set_sync(true);
  loss().backward();
  ASSERT_TRUE(sync.Finish().ok());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(torch::allclose(params[i].grad(), torch::full_like(params[i], 2.0 * (i + 1))))
        << "parameter " << i;
  }
  // A backward that reached no parameter: Finish() launches every bucket and completes.
  sync.ZeroGrads();
  ASSERT_TRUE(sync.Finish().ok());
  for (const torch::Tensor& p : params) EXPECT_EQ(p.grad().abs().sum().item<double>(), 0.0);
  // Broadcast from rank 0 leaves one rank's values as they are.
  const torch::Tensor before = params[2].detach().clone();
  ASSERT_TRUE(sync.BroadcastParameters().ok());
  EXPECT_TRUE(torch::equal(before, params[2].detach()));
}

// Two zero parameters in 1 MiB buckets: params_[0] of 300 Ki floats (1.2 MiB) and params_[1] of
// 8, so two buckets, bucket 0 holding params_[1] (reverse order) and bucket 1 params_[0].
class GradSyncTwoBuckets : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(group_, nullptr);
    sync_.emplace(group_.get(), params_, /*bucket_bytes=*/1024 * 1024);
    ASSERT_EQ(sync_->num_buckets(), 2);
  }

  // Zeroes the gradients and runs a backward pass that gives params_[0] gradient 3 and
  // params_[1] gradient 5.
  void Backward() {
    sync_->ZeroGrads();
    ((params_[0] * 3.0).sum() + (params_[1] * 5.0).sum()).backward();
  }

  std::unique_ptr<comm::ProcessGroup> group_ = OneRank();
  std::vector<torch::Tensor> params_ = {torch::zeros({300 * 1024}).requires_grad_(),
                                        torch::zeros({8}).requires_grad_()};
  std::optional<GradSync> sync_;
};

TEST_F(GradSyncTwoBuckets, WithoutOverlapFinishSendsEveryBucket) {
  sync_->set_overlap(false);
  for (int step = 0; step < 2; ++step) {
    Backward();
    const absl::Status finished = sync_->Finish();
    ASSERT_TRUE(finished.ok()) << finished;
    EXPECT_TRUE(torch::allclose(params_[0].grad(), torch::full_like(params_[0], 3.0))) << step;
    EXPECT_TRUE(torch::allclose(params_[1].grad(), torch::full_like(params_[1], 5.0))) << step;
  }
}

TEST_F(GradSyncTwoBuckets, FinishCallsBackEachBucketInOrderWithItsMean) {
  Backward();
  std::vector<int64_t> order;
  std::vector<double> seen;
  const absl::Status finished = sync_->Finish([&](int64_t b) {
    order.push_back(b);
    seen.push_back(params_[sync_->bucket_params(b).front()].grad()[0].item<double>());
  });
  ASSERT_TRUE(finished.ok()) << finished;
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(seen, (std::vector<double>{5.0, 3.0}));
}

TEST(GradSync, Bf16WireIsNcclOnly) {
  auto group = OneRank();
  ASSERT_NE(group, nullptr);
  // Gloo has no bf16 all-reduce ("Invalid scalar type"): asked for a bf16 wire, the Gloo group
  // averages fp32 as it is. Gradient 1 + 2^-10 (not a bf16 value) comes back exact.
  std::vector<torch::Tensor> params = {torch::zeros({4}).requires_grad_()};
  GradSync sync(group.get(), params, kDefaultBucketBytes, torch::kBFloat16);
  sync.ZeroGrads();
  (params[0] * (1.0 + 1.0 / 1024)).sum().backward();
  const absl::Status finished = sync.Finish();
  ASSERT_TRUE(finished.ok()) << finished;
  EXPECT_EQ(params[0].grad().scalar_type(), torch::kFloat);
  EXPECT_EQ(params[0].grad()[0].item<double>(), 1.0 + 1.0 / 1024);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
