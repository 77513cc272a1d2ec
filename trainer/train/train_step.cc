#include "trainer/train/train_step.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "common/status_macros.h"
#include "trainer/optim/grad_clip.h"

namespace tunefleet {
namespace trainer {

TrainStep::TrainStep(const TrainConfig& train, const torch::Device& device, Precision precision,
                     TaskModel model, comm::ProcessGroup* group, std::string graphs_note,
                     bool quiet)
    : train_(train),
      device_(device),
      precision_(precision),
      model_(std::move(model)),
      group_(group),
      graphs_note_(std::move(graphs_note)),
      quiet_(quiet),
      params_(model_->TrainableParameters()) {}

TrainStep::~TrainStep() = default;

int64_t TrainStep::num_parameters() const {
  int64_t parameters = 0;
  for (const torch::Tensor& p : params_) parameters += p.numel();
  return parameters;
}

absl::Status TrainStep::Init() {
  const bool zero1 = group_ != nullptr && train_.strategy == "zero1";
  if (group_ != nullptr) {
    grad_sync_ = std::make_unique<GradSync>(
        group_, params_, train_.ddp_bucket_mb << 20,
        train_.ddp_comm_dtype == "bf16" ? c10::optional<torch::ScalarType>(torch::kBFloat16)
                                        : c10::nullopt,
        zero1 ? GradReduce::kReduceScatter : GradReduce::kAllReduce);
    // A loss that backpropagates in several passes (cached_mnrl) would mark each gradient ready
    // in the first: its buckets wait for Finish().
    if (model_->task().multi_pass_backward()) grad_sync_->set_overlap(false);
    RETURN_IF_ERROR(grad_sync_->BroadcastParameters());
  }
  const AdamWOptions options{0.9, 0.999, 1e-8, train_.weight_decay};
  if (zero1) {
    sharded_ = std::make_unique<ShardedAdamW>(group_, *grad_sync_, params_, options);
  } else {
    optimizer_ = std::make_unique<AdamW>(params_, options);
  }
  if (graphs_planned()) {
    step_graphs_ = std::make_unique<StepGraphs>(
        device_,
        [this](const TaskBatch& batch, int64_t micro, bool first, bool sync) {
          torch::Tensor loss = MicroStep(batch, micro, first, sync);
          if (sync && grad_sync_ != nullptr) {
            const absl::Status s = grad_sync_->Finish();
            TORCH_CHECK(s.ok(), std::string(s.message()));
          }
          return loss;
        },
        [this](const torch::Tensor& lr) { return UpdateAt(lr); });
  }
  return absl::OkStatus();
}

bool TrainStep::Graphed() {
  if (step_graphs_ == nullptr || steps_run_ == 0) return false;
  if (steps_run_ == 1) {  // once: can the captures find everything in place?
    bool ready = sharded_ != nullptr ? sharded_->fused() : optimizer_->fused();
    for (const torch::Tensor& p : params_) ready = ready && p.grad().defined();
    if (!ready) {
      step_graphs_.reset();
      graphs_note_ = "a parameter got no gradient in the first step";
      if (!quiet_) std::printf("steps    eager from now: %s\n", graphs_note_.c_str());
      return false;
    }
  }
  return true;
}

absl::StatusOr<torch::Tensor> TrainStep::Run(int64_t micro,
                                             const std::function<TaskBatch(int64_t)>& batch,
                                             double lr) {
  const bool graphed = Graphed();
  torch::Tensor total;
  for (int64_t m = 0; m < micro; ++m) {
    const TaskBatch host = batch(m);
    const bool first = m == 0, sync = m == micro - 1;
    // A replayed graph's loss is overwritten by its next replay: cloned.
    const torch::Tensor loss = graphed ? step_graphs_->MicroStep(host, micro, first, sync).clone()
                                       : MicroStep(host.To(device_), micro, first, sync);
    total = total.defined() ? total + loss : loss;
  }
  ++steps_run_;
  if (graphed) {  // the captured update; Finish ran inside the last micro-step's graph
    last_norm_ = step_graphs_->Update(lr).clone();
  } else {
    RETURN_IF_ERROR(EagerUpdate(lr));
  }
  return total / static_cast<double>(micro);
}

torch::Tensor TrainStep::MicroStep(const TaskBatch& batch, int64_t micro, bool first, bool sync) {
  if (first) {
    if (grad_sync_ != nullptr) {
      grad_sync_->ZeroGrads();
    } else if (step_graphs_ != nullptr) {  // persistent gradients (else they are none here)
      std::vector<torch::Tensor> grads = DefinedGrads(params_);
      if (!grads.empty()) at::_foreach_zero_(grads);
    }
  }
  const double loss_scale = precision_ == Precision::kFp16 ? scaler_.scale() : 1.0;
  torch::Tensor loss;
  {
    AutocastScope autocast(device_.type(), precision_);
    loss = model_->Loss(batch).to(torch::kFloat);
  }
  if (grad_sync_ != nullptr) grad_sync_->set_sync(sync);
  (loss * (loss_scale / static_cast<double>(micro))).backward();
  return loss.detach();
}

std::vector<torch::Tensor> TrainStep::UpdatedGrads() const {
  return sharded_ != nullptr ? sharded_->shard_grads() : DefinedGrads(params_);
}

absl::StatusOr<torch::Tensor> TrainStep::GradNorm(const std::vector<torch::Tensor>& grads) {
  if (sharded_ != nullptr) return sharded_->GradNorm();
  return TotalGradNorm(grads);
}

torch::Tensor TrainStep::UpdateAt(const torch::Tensor& lr) {
  std::vector<torch::Tensor> grads = UpdatedGrads();
  absl::StatusOr<torch::Tensor> norm = GradNorm(grads);
  TORCH_CHECK(norm.ok(), std::string(norm.status().message()));
  if (train_.max_grad_norm > 0) ClipGradsByTotalNorm(grads, *norm, train_.max_grad_norm);
  if (sharded_ != nullptr) {
    const absl::Status s = sharded_->StepWithDeviceLr(lr);
    TORCH_CHECK(s.ok(), std::string(s.message()));
  } else {
    optimizer_->StepWithDeviceLr(lr);
  }
  return *norm;
}

absl::Status TrainStep::EagerUpdate(double lr) {
  if (grad_sync_ != nullptr) RETURN_IF_ERROR(grad_sync_->Finish());
  std::vector<torch::Tensor> grads = UpdatedGrads();
  const bool fp16 = precision_ == Precision::kFp16;
  if (fp16) ScaleGrads(grads, 1.0 / scaler_.scale());
  ASSIGN_OR_RETURN(last_norm_, GradNorm(grads));
  bool skip = false;
  if (fp16) {
    skip = !std::isfinite(last_norm_.item<double>());
    scaler_.Update(skip);
  }
  if (!skip) {
    if (train_.max_grad_norm > 0) ClipGradsByTotalNorm(grads, last_norm_, train_.max_grad_norm);
    if (sharded_ != nullptr) {
      RETURN_IF_ERROR(sharded_->Step(lr));
    } else {
      optimizer_->Step(lr);
    }
  }
  // Set to none; under DDP the bucket views are zeroed instead, and graphs keep theirs.
  if (grad_sync_ == nullptr && step_graphs_ == nullptr) {
    for (torch::Tensor& p : params_) p.mutable_grad() = torch::Tensor();
  }
  return absl::OkStatus();
}

const char* TrainStep::optimizer_implementation() const {
  return sharded_ != nullptr ? sharded_->implementation() : optimizer_->implementation();
}

absl::StatusOr<std::map<std::string, torch::Tensor>> TrainStep::OptimizerState() {
  if (sharded_ != nullptr) return sharded_->StateDict();
  return optimizer_->StateDict();
}

absl::Status TrainStep::LoadOptimizerState(const std::map<std::string, torch::Tensor>& state) {
  if (sharded_ != nullptr) return sharded_->LoadStateDict(state);
  return optimizer_->LoadStateDict(state);
}

int64_t TrainStep::optimizer_state_bytes() const {
  if (sharded_ != nullptr) return sharded_->state_bytes();
  int64_t bytes = 0;
  for (const auto& [name, t] : optimizer_->StateDict()) bytes += t.numel() * t.element_size();
  return bytes;
}

int64_t TrainStep::unsharded_optimizer_state_bytes() const {
  if (sharded_ != nullptr) return sharded_->unsharded_state_bytes();
  return optimizer_state_bytes();
}

}  // namespace trainer
}  // namespace tunefleet
