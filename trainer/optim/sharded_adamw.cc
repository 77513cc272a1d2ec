#include "trainer/optim/sharded_adamw.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "trainer/optim/grad_clip.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr const char* kMoments[] = {"exp_avg", "exp_avg_sq"};

// One parameter's entries of a whole state dict.
struct ParamState {
  torch::Tensor exp_avg, exp_avg_sq, step;
  int present() const { return exp_avg.defined() + exp_avg_sq.defined() + step.defined(); }
  torch::Tensor& moment(int m) { return m == 0 ? exp_avg : exp_avg_sq; }
};

// AdamW::StateDict()'s names, checked and grouped by parameter (`n` parameters).
absl::StatusOr<std::vector<ParamState>> SplitByParameter(
    const std::map<std::string, torch::Tensor>& state, size_t n) {
  std::vector<ParamState> out(n);
  for (const auto& [name, tensor] : state) {
    const std::vector<std::string> parts = absl::StrSplit(name, '.');
    size_t i = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &i) || i >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state: unexpected tensor \"", name, "\" (", n, " parameters)"));
    }
    if (parts[1] == "step") {
      out[i].step = tensor;
    } else if (parts[1] == kMoments[0] || parts[1] == kMoments[1]) {
      out[i].moment(parts[1] == kMoments[0] ? 0 : 1) = tensor;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state: unexpected tensor \"", name, "\""));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i].present() != 0 && out[i].present() != 3) {
      return absl::InvalidArgumentError(absl::StrCat("optimizer state: parameter ", i,
                                                     " lacks some of exp_avg, exp_avg_sq, step"));
    }
  }
  return out;
}

}  // namespace

ShardedAdamW::ShardedAdamW(comm::ProcessGroup* group, const GradSync& grads,
                           std::vector<torch::Tensor> params, AdamWOptions options)
    : group_(group), params_(std::move(params)) {
  torch::NoGradGuard no_grad;
  const int64_t parts = group_->size(), rank = group_->rank();
  for (int64_t b = 0; b < grads.num_buckets(); ++b) {
    const torch::Tensor& gradient = grads.bucket_buffer(b);
    Bucket bucket;
    bucket.params = grads.bucket_params(b);
    bucket.part = gradient.numel() / parts;
    bucket.flat = torch::zeros({gradient.numel()},
                               params_[bucket.params.front()].options().requires_grad(false));
    int64_t offset = 0;
    for (size_t k : bucket.params) {
      torch::Tensor& p = params_[k];
      const int64_t n = p.numel();
      torch::Tensor place = bucket.flat.narrow(0, offset, n);
      place.copy_(p.detach().reshape({-1}));
      p.set_data(place.view(p.sizes()));
      bucket.offsets.push_back(offset);
      offset += n;
    }
    shard_params_.push_back(bucket.flat.narrow(0, rank * bucket.part, bucket.part).detach());
    shard_grads_.push_back(gradient.narrow(0, rank * bucket.part, bucket.part));
    shard_params_.back().mutable_grad() = shard_grads_.back();
    buckets_.push_back(std::move(bucket));
  }
  shards_ = std::make_unique<AdamW>(shard_params_, options);
}

absl::StatusOr<torch::Tensor> ShardedAdamW::GradNorm() {
  torch::NoGradGuard no_grad;
  const torch::Tensor local = TotalGradNorm(shard_grads_);
  torch::Tensor squares = (local * local).reshape({1});
  RETURN_IF_ERROR(group_->AllReduceSum(squares));
  return squares.sqrt().reshape({});
}

absl::Status ShardedAdamW::Gather() {
  std::vector<comm::ProcessGroup::Pending> pending;
  for (Bucket& b : buckets_) pending.push_back(group_->AllGatherInPlaceAsync(b.flat));
  absl::Status status;
  for (comm::ProcessGroup::Pending& p : pending) status.Update(p.Wait());
  if (!status.ok())
    return absl::Status(status.code(), absl::StrCat("parameters: ", status.message()));
  return status;
}

absl::Status ShardedAdamW::Step(double lr) {
  shards_->Step(lr);
  return Gather();
}

absl::Status ShardedAdamW::StepWithDeviceLr(const torch::Tensor& lr) {
  shards_->StepWithDeviceLr(lr);
  return Gather();
}

int64_t ShardedAdamW::state_bytes() const {
  int64_t bytes = 0;
  for (const auto& [name, t] : shards_->StateDict()) bytes += t.numel() * t.element_size();
  return bytes;
}

int64_t ShardedAdamW::unsharded_state_bytes() const {
  int64_t bytes = 0;
  for (const torch::Tensor& p : params_) bytes += 2 * p.numel() * 4 + 4;  // float32 moments, step
  return bytes;
}

absl::StatusOr<std::map<std::string, torch::Tensor>> ShardedAdamW::StateDict() {
  torch::NoGradGuard no_grad;
  const std::map<std::string, torch::Tensor> local = shards_->StateDict();
  std::map<std::string, torch::Tensor> out;
  const bool keep = group_->rank() == 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    // The ranks step together: a bucket has state on every rank or on none.
    const auto step = local.find(absl::StrCat(b, ".step"));
    if (step == local.end()) continue;
    for (const char* moment : kMoments) {
      const torch::Tensor& mine = local.at(absl::StrCat(b, ".", moment));
      torch::Tensor whole = torch::empty({bucket.flat.numel()}, mine.options());
      whole.narrow(0, group_->rank() * bucket.part, bucket.part).copy_(mine);
      absl::Status s = group_->AllGatherInPlaceAsync(whole).Wait();
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat("optimizer state: ", s.message()));
      if (!keep) continue;
      const torch::Tensor host = whole.to(torch::kCPU);
      for (size_t j = 0; j < bucket.params.size(); ++j) {
        const torch::Tensor& p = params_[bucket.params[j]];
        out[absl::StrCat(bucket.params[j], ".", moment)] =
            host.narrow(0, bucket.offsets[j], p.numel()).view(p.sizes());
      }
    }
    if (keep) {
      const torch::Tensor host_step = step->second.to(torch::kCPU);
      for (size_t k : bucket.params) out[absl::StrCat(k, ".step")] = host_step.clone();
    }
  }
  return out;
}

absl::Status ShardedAdamW::LoadStateDict(const std::map<std::string, torch::Tensor>& state) {
  ASSIGN_OR_RETURN(std::vector<ParamState> by_param, SplitByParameter(state, params_.size()));
  std::map<std::string, torch::Tensor> local;
  const int64_t rank = group_->rank();
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    // The bucket's parameters: all with state at one step, or none with state.
    size_t first = bucket.params.front();
    int with_state = 0;
    for (size_t k : bucket.params) {
      if (by_param[k].present() == 0) continue;
      if (with_state++ == 0) first = k;
      const double a = by_param[first].step.item<double>(), c = by_param[k].step.item<double>();
      if (a != c) {
        return absl::InvalidArgumentError(absl::StrCat(
            "optimizer state: parameters ", first, " and ", k, " share a shard but not a step (", a,
            " and ", c, "): resume this checkpoint with train.strategy: ddp"));
      }
    }
    if (with_state == 0) continue;
    if (with_state != static_cast<int>(bucket.params.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state: some parameters of the shard of parameter ", first,
                       " have no state: resume this checkpoint with train.strategy: ddp"));
    }
    for (int m = 0; m < 2; ++m) {
      torch::Tensor whole = torch::zeros({bucket.flat.numel()}, torch::kFloat);
      for (size_t j = 0; j < bucket.params.size(); ++j) {
        const size_t k = bucket.params[j];
        const torch::Tensor& t = by_param[k].moment(m);
        const torch::Tensor& p = params_[k];
        if (t.sizes() != p.sizes()) {
          return absl::InvalidArgumentError(
              absl::StrCat("optimizer state: ", k, ".", kMoments[m], " has shape [",
                           absl::StrJoin(t.sizes(), ", "), "], the parameter [",
                           absl::StrJoin(p.sizes(), ", "), "]"));
        }
        whole.narrow(0, bucket.offsets[j], p.numel()).copy_(t.reshape({-1}));
      }
      local[absl::StrCat(b, ".", kMoments[m])] =
          whole.narrow(0, rank * bucket.part, bucket.part).clone();
    }
    local[absl::StrCat(b, ".step")] = by_param[first].step;
  }
  return shards_->LoadStateDict(local);
}

}  // namespace trainer
}  // namespace tunefleet
