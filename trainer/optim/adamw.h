// AdamW with torch.optim.AdamW's arithmetic (Loshchilov & Hutter; torch semantics): for each
// parameter p with gradient g at its own step t,
//   p <- p * (1 - lr * weight_decay)                     (decoupled decay, on every parameter)
//   m <- beta1 m + (1 - beta1) g;  v <- beta2 v + (1 - beta2) g^2
//   p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// A parameter whose .grad() is undefined at a step is left alone (no decay, its t does not
// advance), as torch does. One multi-tensor update per step: at::_fused_adamw_ (the kernel of
// torch's AdamW(fused=True)) on CUDA with LibTorch >= 2.4, else the _foreach_* operations of
// torch's foreach path. The learning rate is given at each step (the schedule owns it).
// State (moments, steps) is created on a parameter's first gradient, on its device, float32.
// Thread-safety: not thread-safe; one optimizer per rank.
#ifndef TUNEFLEET_TRAINER_OPTIM_ADAMW_H_
#define TUNEFLEET_TRAINER_OPTIM_ADAMW_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/status.h"

namespace tunefleet {
namespace trainer {

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

class AdamW {
 public:
  AdamW(std::vector<torch::Tensor> params, AdamWOptions options);

  // Updates every parameter that has a gradient, with learning rate `lr`.
  void Step(double lr);

  // As Step(lr), with the rate read from `lr` (a float32 scalar on the parameters' device)
  // when the kernel runs, so that a step captured in a CUDA graph follows the schedule. Fused
  // implementation only (fused()), and every parameter must already have a gradient and state
  // (after a first Step): nothing is allocated here.
  void StepWithDeviceLr(const torch::Tensor& lr);
  bool fused() const { return fused_; }

  // Which implementation Step() runs: "fused", "foreach".
  const char* implementation() const;

  // Optimizer state for checkpoints: "<i>.exp_avg", "<i>.exp_avg_sq", "<i>.step" (float32
  // scalar) for each parameter i (in the constructor's order) that has state.
  std::map<std::string, torch::Tensor> StateDict() const;
  // Restores StateDict()'s output onto the parameters' devices; shapes must match.
  absl::Status LoadStateDict(const std::map<std::string, torch::Tensor>& state);

 private:
  struct State {
    torch::Tensor exp_avg, exp_avg_sq;
    torch::Tensor step;  // float32 scalar on the parameter's device (torch keeps it so)
    int64_t host_step = 0;
  };
  void EnsureState(size_t i);

  std::vector<torch::Tensor> params_;
  AdamWOptions options_;
  std::vector<State> state_;
  bool fused_ = false;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_OPTIM_ADAMW_H_
