// trainer/optim/sharded_adamw.h (ZeRO-1) on 2 and 3 forked Gloo ranks (3 pads the buckets; skipped
// where LibTorch has no Gloo, as PyTorch's wheels), against
// one unsharded AdamW in each rank that steps on the mean of every rank's gradients:
//   - GradSync's reduce-scatter and the sharded update give every rank the reference's
//     parameters after each step (with clipping on the global norm, which GradNorm() gives every
//     rank alike), within 1e-6;
//   - each rank holds exactly its share of the moments (8 bytes x ceil(bucket / world) a bucket)
//     and a step count a bucket;
//   - StateDict() gathers the reference's whole state on rank 0 (nothing on the others);
//   - LoadStateDict() takes the reference's state into an optimizer of another bucket layout,
//     and its next step is the reference's next step;
//   - a malformed state is a one-line error;
//   - on a GPU (skipped without one), a world of 1 over NCCL, whose reduce-scatter and
//     all-gather calls the CPU ranks do not take (Gloo falls back to an all-reduce): eager, then
//     the update replayed as a CUDA graph (StepGraphs: the norm's all-reduce, clipping, fused
//     AdamW at a device learning rate, the all-gather) follows the reference.
// Training with train.strategy zero1 is compared with ddp, and checkpoints across strategies, in
// tests/trainer/train/zero1_train_test.cc.
#include "trainer/optim/sharded_adamw.h"

#include <cstdio>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_util/forked_ranks.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/optim/adamw.h"
#include "trainer/optim/grad_clip.h"
#include "trainer/train/step_graphs.h"

namespace tunefleet {
namespace trainer {
namespace {

const AdamWOptions kOptions{0.9, 0.999, 1e-8, 0.01};

std::vector<torch::Tensor> MakeParams() {
  torch::manual_seed(1);
  std::vector<torch::Tensor> out;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{7, 5}, {13}, {300}, {3, 3}, {64}}) {
    out.push_back(torch::randn(shape));
  }
  return out;
}

// Rank `rank`'s gradient of parameter i at `step`.
torch::Tensor Grad(int step, int rank, size_t i, const torch::Tensor& p) {
  torch::manual_seed(static_cast<uint64_t>(1000 * step + 100 * rank + static_cast<int>(i)));
  return (torch::randn(p.sizes()) * (0.5 + static_cast<double>(i))).to(p.device());
}

std::vector<torch::Tensor> Leaves(const std::vector<torch::Tensor>& values) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& v : values) out.push_back(v.detach().clone().requires_grad_());
  return out;
}

std::vector<torch::Tensor> To(const torch::Device& device, const std::vector<torch::Tensor>& v) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : v) out.push_back(t.to(device).detach().requires_grad_());
  return out;
}

double MaxDiff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, (a[i].detach() - b[i].detach()).abs().max().item<double>());
  }
  return d;
}

// Failures of one rank, printed to stderr.
struct Checks {
  int rank = 0;
  int failures = 0;
  void That(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
    ++failures;
  }
};

// The sharded update at a device rate: norm, clipping at 0.5, AdamW, all-gather (what
// TrainStep captures).
torch::Tensor DeviceUpdate(ShardedAdamW& sharded, const torch::Tensor& lr) {
  auto norm = sharded.GradNorm();
  TORCH_CHECK(norm.ok(), std::string(norm.status().message()));
  std::vector<torch::Tensor> grads = sharded.shard_grads();
  ClipGradsByTotalNorm(grads, *norm, 0.5);
  const absl::Status s = sharded.StepWithDeviceLr(lr);
  TORCH_CHECK(s.ok(), std::string(s.message()));
  return *norm;
}

// One step of the sharded optimizer on `params` (this rank's gradients) and of `ref` (the mean
// gradients), clipped at 0.5; the sharded update replayed from `graphs` when given.
void StepBoth(int step, comm::ProcessGroup& g, std::vector<torch::Tensor>& params, GradSync& sync,
              ShardedAdamW& sharded, std::vector<torch::Tensor>& ref, AdamW& ref_opt, Checks& c,
              StepGraphs* graphs = nullptr) {
  sync.ZeroGrads();
  torch::Tensor loss = torch::zeros({});
  for (size_t i = 0; i < params.size(); ++i) {
    loss = loss + (params[i] * Grad(step, g.rank(), i, params[i])).sum();
  }
  loss.backward();
  c.That(sync.Finish().ok(), "GradSync::Finish failed");
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < ref.size(); ++i) {
    torch::Tensor mean = torch::zeros(ref[i].sizes(), ref[i].options().requires_grad(false));
    for (int r = 0; r < g.size(); ++r) mean += Grad(step, r, i, ref[i]);
    ref[i].mutable_grad() = mean / static_cast<double>(g.size());
  }
  std::vector<torch::Tensor> ref_grads = DefinedGrads(ref);
  const torch::Tensor ref_norm = TotalGradNorm(ref_grads);
  absl::StatusOr<torch::Tensor> norm =
      graphs != nullptr ? absl::StatusOr<torch::Tensor>(graphs->Update(1e-2)) : sharded.GradNorm();
  c.That(norm.ok(), "GradNorm failed");
  if (!norm.ok()) return;
  const double rel = std::abs(norm->item<double>() / ref_norm.item<double>() - 1);
  c.That(rel < 1e-6, "step " + std::to_string(step) + ": norm " +
                         std::to_string(norm->item<double>()) + ", reference " +
                         std::to_string(ref_norm.item<double>()));
  if (graphs == nullptr) {
    std::vector<torch::Tensor> shard_grads = sharded.shard_grads();
    ClipGradsByTotalNorm(shard_grads, *norm, 0.5);
    c.That(sharded.Step(1e-2).ok(), "Step failed");
  }
  ClipGradsByTotalNorm(ref_grads, ref_norm, 0.5);
  ref_opt.Step(1e-2);
  const double diff = MaxDiff(params, ref);
  c.That(diff < 1e-6,
         "step " + std::to_string(step) + ": parameters differ by " + std::to_string(diff));
}

int ShardedMatchesUnsharded(comm::ProcessGroup& g) {
  torch::set_num_threads(1);
  Checks c{g.rank()};
  const std::vector<torch::Tensor> initial = MakeParams();
  std::vector<torch::Tensor> params = Leaves(initial), ref = Leaves(initial);
  // 1 KiB buckets: several, one of a parameter alone (300 floats).
  GradSync sync(&g, params, /*bucket_bytes=*/1024, c10::nullopt, GradReduce::kReduceScatter);
  ShardedAdamW sharded(&g, sync, params, kOptions);
  AdamW ref_opt(ref, kOptions);
  c.That(sync.num_buckets() >= 3,
         "expected several buckets, got " + std::to_string(sync.num_buckets()));
  c.That(MaxDiff(params, ref) == 0, "the flat buffers changed the parameters' values");
  for (int step = 1; step <= 3; ++step) StepBoth(step, g, params, sync, sharded, ref, ref_opt, c);

  // This rank's share of the state: 2 float32 moments of ceil(n / world) and one step a bucket.
  int64_t want = 0;
  for (int64_t b = 0; b < sync.num_buckets(); ++b) {
    int64_t n = 0;
    for (size_t k : sync.bucket_params(b)) n += params[k].numel();
    want += 8 * ((n + g.size() - 1) / g.size()) + 4;
  }
  c.That(sharded.state_bytes() == want,
         "state bytes " + std::to_string(sharded.state_bytes()) + ", want " + std::to_string(want));
  int64_t unsharded = 0;
  for (const auto& [name, t] : ref_opt.StateDict()) unsharded += t.numel() * t.element_size();
  c.That(sharded.unsharded_state_bytes() == unsharded,
         "unsharded bytes " + std::to_string(sharded.unsharded_state_bytes()) + ", AdamW holds " +
             std::to_string(unsharded));

  // The whole state on rank 0.
  auto state = sharded.StateDict();
  c.That(state.ok(), "StateDict failed");
  if (!state.ok()) return c.failures + 1;
  const auto want_state = ref_opt.StateDict();
  if (g.rank() == 0) {
    c.That(state->size() == want_state.size(), "StateDict has " + std::to_string(state->size()) +
                                                   " tensors, AdamW " +
                                                   std::to_string(want_state.size()));
    for (const auto& [name, t] : want_state) {
      auto it = state->find(name);
      c.That(it != state->end() && it->second.sizes() == t.sizes() &&
                 it->second.device().is_cpu() && (it->second - t).abs().max().item<double>() < 1e-6,
             "StateDict's " + name + " differs from AdamW's");
    }
  } else {
    c.That(state->empty(), "a rank other than 0 got state");
  }

  // The reference's state (any layout) into another layout; the next step agrees.
  std::vector<torch::Tensor> params2 = Leaves(ref);
  GradSync sync2(&g, params2, /*bucket_bytes=*/600, c10::nullopt, GradReduce::kReduceScatter);
  ShardedAdamW sharded2(&g, sync2, params2, kOptions);
  const absl::Status loaded = sharded2.LoadStateDict(want_state);
  c.That(loaded.ok(), "LoadStateDict: " + std::string(loaded.message()));
  StepBoth(4, g, params2, sync2, sharded2, ref, ref_opt, c);

  // Malformed states.
  const absl::Status partial = sharded2.LoadStateDict({{"1.exp_avg", torch::zeros({13})}});
  c.That(
      absl::StrContains(partial.message(), "parameter 1 lacks some of exp_avg, exp_avg_sq, step"),
      "partial state: " + std::string(partial.message()));
  const absl::Status stranger = sharded2.LoadStateDict({{"9.step", torch::zeros({})}});
  c.That(absl::StrContains(stranger.message(), "unexpected tensor \"9.step\" (5 parameters)"),
         "unknown parameter: " + std::string(stranger.message()));
  auto shaped = want_state;
  shaped["2.exp_avg"] = torch::zeros({299});
  const absl::Status wrong = sharded2.LoadStateDict(shaped);
  c.That(absl::StrContains(wrong.message(), "2.exp_avg has shape [299], the parameter [300]"),
         "wrong shape: " + std::string(wrong.message()));
  return c.failures;
}

TEST(ShardedAdamW, TwoRanksMatchOneUnshardedAdamW) {
  if (!comm::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "this LibTorch has no Gloo";
  EXPECT_EQ(RunForkedRanks(2, ShardedMatchesUnsharded), std::vector<int>(2, 0));
}

TEST(ShardedAdamW, ThreeRanksWithPaddedBucketsMatchOneUnshardedAdamW) {
  if (!comm::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "this LibTorch has no Gloo";
  EXPECT_EQ(RunForkedRanks(3, ShardedMatchesUnsharded), std::vector<int>(3, 0));
}

TEST(ShardedAdamW, NcclEagerAndGraphedMatchAdamW) {
  if (!torch::cuda::is_available() || !comm::ProcessGroup::NcclAvailable() ||
      !StepGraphs::Available()) {
    GTEST_SKIP() << "needs a GPU and a CUDA LibTorch with NCCL";
  }
  const torch::Device device(torch::kCUDA, 0);
  SideStreamScope side(device);  // a capture cannot use the legacy default stream
  comm::DistEnv env;
  env.master_port = 0;
  auto group = comm::ProcessGroup::Connect(env, comm::ProcessGroup::Backend::kNccl,
                                           std::chrono::seconds(60));
  ASSERT_TRUE(group.ok()) << group.status();
  comm::ProcessGroup& g = **group;
  Checks c{0};
  const std::vector<torch::Tensor> initial = To(device, MakeParams());
  std::vector<torch::Tensor> params = Leaves(initial), ref = Leaves(initial);
  GradSync sync(&g, params, /*bucket_bytes=*/1024, c10::nullopt, GradReduce::kReduceScatter);
  ShardedAdamW sharded(&g, sync, params, kOptions);
  AdamW ref_opt(ref, kOptions);
  EXPECT_TRUE(sharded.fused());
  StepBoth(1, g, params, sync, sharded, ref, ref_opt, c);  // eager: creates the state
  StepGraphs graphs(
      device, [](const TaskBatch&, int64_t, bool, bool) { return torch::Tensor(); },
      [&](const torch::Tensor& lr) { return DeviceUpdate(sharded, lr); });
  for (int step = 2; step <= 5; ++step) {
    StepBoth(step, g, params, sync, sharded, ref, ref_opt, c, &graphs);
  }
  EXPECT_EQ(c.failures, 0);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
