#include "trainer/optim/adamw.h"

#include <cmath>
#include <utility>

#include <ATen/ATen.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "trainer/torch_version.h"

namespace tunefleet {
namespace trainer {
namespace {

// The tensor lists of one multi-tensor update: parameters, their gradients, first and second
// moments, and step counts, in the same order.
struct UpdateLists {
  std::vector<torch::Tensor> p, g, m, v, t;

  void Add(const torch::Tensor& param, const torch::Tensor& exp_avg,
           const torch::Tensor& exp_avg_sq, const torch::Tensor& step) {
    p.push_back(param);
    g.push_back(param.grad());
    m.push_back(exp_avg);
    v.push_back(exp_avg_sq);
    t.push_back(step);
  }
};

#if TF_TORCH_AT_LEAST(2, 4)
// Advances the step counts and runs at::_fused_adamw_; `lr` is a double, or a float32 scalar
// tensor read when the kernel runs.
template <typename Lr>
void FusedUpdate(UpdateLists& lists, const Lr& lr, const AdamWOptions& o) {
  at::_foreach_add_(lists.t, at::Scalar(1.0));
  at::_fused_adamw_(lists.p, lists.g, lists.m, lists.v, /*max_exp_avg_sqs=*/at::TensorList(),
                    lists.t, lr, o.beta1, o.beta2, o.weight_decay, o.eps, /*amsgrad=*/false,
                    /*maximize=*/false);
}
#endif

}  // namespace

AdamW::AdamW(std::vector<torch::Tensor> params, AdamWOptions options)
    : params_(std::move(params)), options_(options), state_(params_.size()) {
#if TF_TORCH_AT_LEAST(2, 4)
  fused_ = !params_.empty();
  for (const torch::Tensor& p : params_) {
    fused_ = fused_ && p.is_cuda() && p.scalar_type() == torch::kFloat;
  }
#endif
}

const char* AdamW::implementation() const { return fused_ ? "fused" : "foreach"; }

void AdamW::EnsureState(size_t i) {
  State& s = state_[i];
  if (s.exp_avg.defined()) return;
  const torch::Tensor& p = params_[i];
  s.exp_avg = torch::zeros_like(p, torch::MemoryFormat::Preserve);
  s.exp_avg_sq = torch::zeros_like(p, torch::MemoryFormat::Preserve);
  s.step = torch::zeros({}, p.options().dtype(torch::kFloat));
}

void AdamW::Step(double lr) {
  torch::NoGradGuard no_grad;
  std::vector<size_t> active;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].grad().defined()) active.push_back(i);
  }
  if (active.empty()) return;
  for (size_t i : active) {
    EnsureState(i);
    ++state_[i].host_step;
  }
  const AdamWOptions& o = options_;
  if (fused_) {
#if TF_TORCH_AT_LEAST(2, 4)
    UpdateLists lists;
    for (size_t i : active) {
      lists.Add(params_[i], state_[i].exp_avg, state_[i].exp_avg_sq, state_[i].step);
    }
    FusedUpdate(lists, lr, o);
    return;
#endif
  }
  // Parameters that share a step count share their bias corrections: one group each (usually
  // a single group; parameters that skipped steps form another).
  std::map<int64_t, std::vector<size_t>> groups;
  for (size_t i : active) groups[state_[i].host_step].push_back(i);
  for (const auto& [step, members] : groups) {
    UpdateLists lists;
    for (size_t i : members) {
      lists.Add(params_[i], state_[i].exp_avg, state_[i].exp_avg_sq, state_[i].step);
    }
    const double bias1 = 1.0 - std::pow(o.beta1, static_cast<double>(step));
    const double bias2_sqrt = std::sqrt(1.0 - std::pow(o.beta2, static_cast<double>(step)));
    at::_foreach_add_(lists.t, at::Scalar(1.0));
    if (o.weight_decay != 0.0) at::_foreach_mul_(lists.p, at::Scalar(1.0 - lr * o.weight_decay));
    at::_foreach_mul_(lists.m, at::Scalar(o.beta1));
    at::_foreach_add_(lists.m, lists.g, at::Scalar(1.0 - o.beta1));
    at::_foreach_mul_(lists.v, at::Scalar(o.beta2));
    at::_foreach_addcmul_(lists.v, lists.g, lists.g, at::Scalar(1.0 - o.beta2));
    std::vector<torch::Tensor> denom = at::_foreach_sqrt(lists.v);
    at::_foreach_div_(denom, at::Scalar(bias2_sqrt));
    at::_foreach_add_(denom, at::Scalar(o.eps));
    at::_foreach_addcdiv_(lists.p, lists.m, denom, at::Scalar(-lr / bias1));
  }
}

void AdamW::StepWithDeviceLr(const torch::Tensor& lr) {
  TORCH_CHECK(fused_, "AdamW::StepWithDeviceLr needs the fused implementation");
#if TF_TORCH_AT_LEAST(2, 4)
  torch::NoGradGuard no_grad;
  UpdateLists lists;
  for (size_t i = 0; i < params_.size(); ++i) {
    TORCH_CHECK(params_[i].grad().defined() && state_[i].exp_avg.defined(),
                "AdamW::StepWithDeviceLr: parameter ", i, " has no gradient or no state yet");
    lists.Add(params_[i], state_[i].exp_avg, state_[i].exp_avg_sq, state_[i].step);
  }
  FusedUpdate(lists, lr, options_);
#else
  (void)lr;
#endif
}

std::map<std::string, torch::Tensor> AdamW::StateDict() const {
  std::map<std::string, torch::Tensor> out;
  for (size_t i = 0; i < state_.size(); ++i) {
    const State& s = state_[i];
    if (!s.exp_avg.defined()) continue;
    out[absl::StrCat(i, ".exp_avg")] = s.exp_avg;
    out[absl::StrCat(i, ".exp_avg_sq")] = s.exp_avg_sq;
    out[absl::StrCat(i, ".step")] = s.step;
  }
  return out;
}

absl::Status AdamW::LoadStateDict(const std::map<std::string, torch::Tensor>& state) {
  std::vector<State> loaded(params_.size());
  for (const auto& [name, tensor] : state) {
    const std::vector<std::string> parts = absl::StrSplit(name, '.');
    size_t i = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &i) || i >= params_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("optimizer state: unexpected tensor \"", name,
                                                     "\" (", params_.size(), " parameters)"));
    }
    const torch::Tensor& p = params_[i];
    State& s = loaded[i];
    if (parts[1] == "step") {
      if (tensor.numel() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("optimizer state: ", name, " is not a scalar"));
      }
      s.step = tensor.reshape({}).to(p.device(), torch::kFloat).clone();
      s.host_step = static_cast<int64_t>(std::llround(tensor.item<double>()));
    } else if (parts[1] == "exp_avg" || parts[1] == "exp_avg_sq") {
      if (tensor.sizes() != p.sizes()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "optimizer state: ", name, " has shape [", absl::StrJoin(tensor.sizes(), ", "),
            "], the parameter [", absl::StrJoin(p.sizes(), ", "), "]"));
      }
      (parts[1] == "exp_avg" ? s.exp_avg : s.exp_avg_sq) =
          tensor.to(p.device(), p.scalar_type()).clone();
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state: unexpected tensor \"", name, "\""));
    }
  }
  for (size_t i = 0; i < loaded.size(); ++i) {
    const State& s = loaded[i];
    const int present = s.exp_avg.defined() + s.exp_avg_sq.defined() + s.step.defined();
    if (present != 0 && present != 3) {
      return absl::InvalidArgumentError(absl::StrCat("optimizer state: parameter ", i,
                                                     " lacks some of exp_avg, exp_avg_sq, step"));
    }
  }
  state_ = std::move(loaded);
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
