// AdamW (trainer/optim/adamw.h) against LibTorch's own torch::optim::AdamW with the same lr
// (changed every step), betas, eps and weight_decay: 10 steps on random float32 CPU tensors with
// random gradients, params and moments within 1e-6 relative, including parameters whose gradient is
// undefined on some steps (left untouched there, their step count lagging, as torch does). Also
// StateDict()/LoadStateDict(): a fresh optimizer loaded from the state continues bit-identically,
// and a wrong shape or an unknown key is rejected.
#include "trainer/optim/adamw.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR < 2
#include <c10/util/string_utils.h>
#endif

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr int kSteps = 10;

// Parameters 0-2 have a gradient at every step; 3 lacks one at steps 1, 4, 7 (its step count
// lags); 4 gets its first gradient at step 6 (no state before that).
bool HasGrad(size_t param, int step) {
  if (param == 3) return step % 3 != 1;
  if (param == 4) return step >= 6;
  return true;
}

// The number of steps at which `param` had a gradient among steps 0 .. steps-1.
int GradSteps(size_t param, int steps) {
  int n = 0;
  for (int s = 0; s < steps; ++s) n += HasGrad(param, s);
  return n;
}

double Lr(int step) { return 0.01 * (1.0 + 0.25 * step); }

std::vector<torch::Tensor> RandomParams() {
  const std::vector<std::vector<int64_t>> shapes = {{4, 3}, {7}, {2, 3, 5}, {6, 2}, {5}};
  std::vector<torch::Tensor> params;
  for (const auto& shape : shapes) params.push_back(torch::randn(shape, torch::kFloat));
  return params;
}

std::vector<torch::Tensor> Clones(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : tensors) out.push_back(t.detach().clone());
  return out;
}

// Gives each of the parameter lists the same fresh random gradient (an undefined one where
// HasGrad says so).
void SetGrads(int step, const std::vector<std::vector<torch::Tensor>*>& lists) {
  const size_t n = lists[0]->size();
  for (size_t i = 0; i < n; ++i) {
    const torch::Tensor g = torch::randn((*lists[0])[i].sizes(), torch::kFloat);
    for (std::vector<torch::Tensor>* list : lists) {
      (*list)[i].mutable_grad() = HasGrad(i, step) ? g.clone() : torch::Tensor();
    }
  }
}

// Elementwise |got - want| <= 1e-6 |want| (1e-12 absolute, for exact zeros).
void ExpectRelClose(const torch::Tensor& got, const torch::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const torch::Tensor err = (got.to(torch::kDouble) - want.to(torch::kDouble)).abs();
  const torch::Tensor bound = want.to(torch::kDouble).abs() * 1e-6 + 1e-12;
  const torch::Tensor ratio = err / bound;
  EXPECT_TRUE((err <= bound).all().item<bool>())
      << what << ": worst |got - want| / (1e-6 |want|) = " << ratio.max().item<double>()
      << "\ngot\n"
      << got << "\nwant\n"
      << want;
}

torch::optim::AdamWOptions TorchOptions(const AdamWOptions& o) {
  return torch::optim::AdamWOptions(Lr(0))
      .betas(std::make_tuple(o.beta1, o.beta2))
      .eps(o.eps)
      .weight_decay(o.weight_decay);
}

const torch::optim::AdamWParamState* TorchState(const torch::optim::AdamW& opt,
                                                const torch::Tensor& p) {
#if TORCH_VERSION_MAJOR >= 2
  const auto it = opt.state().find(p.unsafeGetTensorImpl());  // keyed by the TensorImpl*
#else
  const auto it = opt.state().find(c10::guts::to_string(p.unsafeGetTensorImpl()));
#endif
  if (it == opt.state().end()) return nullptr;
  return static_cast<const torch::optim::AdamWParamState*>(it->second.get());
}

void CompareWithTorch(const AdamWOptions& options) {
  torch::manual_seed(1234);
  std::vector<torch::Tensor> ours = RandomParams();
  std::vector<torch::Tensor> theirs = Clones(ours);
  AdamW adamw(ours, options);
  torch::optim::AdamW reference(theirs, TorchOptions(options));
  EXPECT_STREQ(adamw.implementation(), "foreach");  // CPU tensors

  for (int step = 0; step < kSteps; ++step) {
    SetGrads(step, {&ours, &theirs});
    const std::vector<torch::Tensor> before = Clones(ours);
    adamw.Step(Lr(step));
    static_cast<torch::optim::AdamWOptions&>(reference.param_groups()[0].options()).lr(Lr(step));
    reference.step();
    for (size_t i = 0; i < ours.size(); ++i) {
      const std::string what = "step " + std::to_string(step) + ", param " + std::to_string(i);
      if (!HasGrad(i, step)) {
        EXPECT_TRUE(torch::equal(ours[i], before[i])) << what << ": changed without a gradient";
      } else {
        EXPECT_FALSE(torch::equal(ours[i], before[i])) << what << ": not updated";
      }
      ExpectRelClose(ours[i], theirs[i], what);
    }
  }

  // Moments and (lagging) step counts as torch keeps them.
  const std::map<std::string, torch::Tensor> state = adamw.StateDict();
  EXPECT_EQ(state.size(), 3 * ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    const std::string prefix = std::to_string(i) + ".";
    const torch::optim::AdamWParamState* want = TorchState(reference, theirs[i]);
    ASSERT_NE(want, nullptr) << i;
    ASSERT_EQ(state.count(prefix + "step"), 1u) << i;
    ASSERT_EQ(state.count(prefix + "exp_avg"), 1u) << i;
    ASSERT_EQ(state.count(prefix + "exp_avg_sq"), 1u) << i;
    const torch::Tensor& step = state.at(prefix + "step");
    EXPECT_EQ(step.scalar_type(), torch::kFloat) << i;
    EXPECT_EQ(step.dim(), 0) << i;
    EXPECT_EQ(step.item<double>(), static_cast<double>(want->step())) << i;
    EXPECT_EQ(want->step(), GradSteps(i, kSteps)) << i;  // 10, 10, 10, 7, 4
    ExpectRelClose(state.at(prefix + "exp_avg"), want->exp_avg(), prefix + "exp_avg");
    ExpectRelClose(state.at(prefix + "exp_avg_sq"), want->exp_avg_sq(), prefix + "exp_avg_sq");
  }
}

TEST(AdamWTest, MatchesTorchAdamWWithDefaults) { CompareWithTorch(AdamWOptions()); }

// Unequal non-default betas catch swapped betas; a large weight decay makes the decay visible.
TEST(AdamWTest, MatchesTorchAdamWWithOtherOptions) {
  AdamWOptions options;
  options.beta1 = 0.8;
  options.beta2 = 0.95;
  options.eps = 1e-6;
  options.weight_decay = 0.3;
  CompareWithTorch(options);
}

TEST(AdamWTest, NoWeightDecayMatchesTorch) {
  AdamWOptions options;
  options.weight_decay = 0.0;
  CompareWithTorch(options);
}

TEST(AdamWTest, StepWithoutAnyGradientChangesNothing) {
  torch::manual_seed(7);
  std::vector<torch::Tensor> params = RandomParams();
  const std::vector<torch::Tensor> before = Clones(params);
  AdamW adamw(params, AdamWOptions());
  adamw.Step(0.1);
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i], before[i])) << i;
  EXPECT_TRUE(adamw.StateDict().empty());
}

std::map<std::string, torch::Tensor> CloneState(const std::map<std::string, torch::Tensor>& s) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, t] : s) out[name] = t.clone();
  return out;
}

TEST(AdamWTest, LoadedStateContinuesIdentically) {
  torch::manual_seed(99);
  AdamWOptions options;
  options.weight_decay = 0.1;
  std::vector<torch::Tensor> original = RandomParams();
  AdamW first(original, options);
  for (int step = 0; step < 5; ++step) {
    SetGrads(step, {&original});
    first.Step(Lr(step));
  }
  const std::map<std::string, torch::Tensor> saved = CloneState(first.StateDict());
  // Parameter 4 has had no gradient yet: no state for it.
  EXPECT_EQ(saved.size(), 12u);
  EXPECT_EQ(saved.count("4.step"), 0u);
  EXPECT_EQ(saved.at("0.step").item<double>(), 5.0);
  EXPECT_EQ(saved.at("3.step").item<double>(), 3.0);

  std::vector<torch::Tensor> resumed = Clones(original);
  AdamW second(resumed, options);
  ASSERT_TRUE(second.LoadStateDict(saved).ok());
  // Control: an optimizer without the state diverges (so the comparison below can fail).
  std::vector<torch::Tensor> cold = Clones(original);
  AdamW third(cold, options);

  for (int step = 5; step < kSteps; ++step) {
    SetGrads(step, {&original, &resumed, &cold});
    first.Step(Lr(step));
    second.Step(Lr(step));
    third.Step(Lr(step));
    for (size_t i = 0; i < original.size(); ++i) {
      EXPECT_TRUE(torch::equal(resumed[i], original[i])) << "step " << step << ", param " << i;
    }
  }
  EXPECT_FALSE(torch::equal(cold[0], original[0]));
  const std::map<std::string, torch::Tensor> a = first.StateDict(), b = second.StateDict();
  ASSERT_EQ(a.size(), 15u);
  ASSERT_EQ(b.size(), a.size());
  for (const auto& [name, t] : a) {
    ASSERT_EQ(b.count(name), 1u) << name;
    EXPECT_TRUE(torch::equal(b.at(name), t)) << name;
  }
  EXPECT_EQ(a.at("3.step").item<double>(), static_cast<double>(GradSteps(3, kSteps)));
  EXPECT_EQ(a.at("4.step").item<double>(), static_cast<double>(GradSteps(4, kSteps)));
}

class AdamWLoadErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(5);
    params_ = RandomParams();
    AdamW adamw(params_, AdamWOptions());
    SetGrads(0, {&params_});
    adamw.Step(0.01);
    state_ = CloneState(adamw.StateDict());
    ASSERT_EQ(state_.size(), 12u);
    fresh_params_ = Clones(params_);
  }

  absl::Status Load(const std::map<std::string, torch::Tensor>& state) {
    AdamW fresh(fresh_params_, AdamWOptions());
    return fresh.LoadStateDict(state);
  }

  std::vector<torch::Tensor> params_, fresh_params_;
  std::map<std::string, torch::Tensor> state_;
};

TEST_F(AdamWLoadErrorTest, AcceptsItsOwnState) { EXPECT_TRUE(Load(state_).ok()); }

TEST_F(AdamWLoadErrorTest, RejectsWrongShape) {
  state_["0.exp_avg"] = torch::zeros({3, 4});  // the parameter is [4, 3]
  const absl::Status status = Load(state_);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("0.exp_avg"), std::string::npos) << status;
}

TEST_F(AdamWLoadErrorTest, RejectsWrongShapeOfSecondMoment) {
  state_["2.exp_avg_sq"] = torch::zeros({2, 3});
  EXPECT_FALSE(Load(state_).ok());
}

TEST_F(AdamWLoadErrorTest, RejectsUnknownSuffix) {
  state_["1.momentum_buffer"] = torch::zeros({7});
  EXPECT_FALSE(Load(state_).ok());
}

TEST_F(AdamWLoadErrorTest, RejectsUnknownName) {
  state_["lr"] = torch::zeros({});
  EXPECT_FALSE(Load(state_).ok());
}

TEST_F(AdamWLoadErrorTest, RejectsParameterIndexOutOfRange) {
  state_["5.exp_avg"] = torch::zeros({5});  // there are 5 parameters: 0 .. 4
  state_["5.exp_avg_sq"] = torch::zeros({5});
  state_["5.step"] = torch::ones({});
  EXPECT_FALSE(Load(state_).ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
