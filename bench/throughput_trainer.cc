#include "bench/throughput_trainer.h"

#include "absl/status/status.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/fused_linear.h"
#include "trainer/model/fused_norm.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/loss_registry.h"

namespace tunefleet {
namespace bench {

ThroughputTrainer::ThroughputTrainer(const ThroughputOptions& o, const trainer::BertConfig& config,
                                     torch::Device device, comm::ProcessGroup* group)
    : device_(device),
      precision_(o.precision == "bf16" ? trainer::Precision::kBf16 : trainer::Precision::kFp32),
      model_(trainer::BertModel(config), trainer::Pooling::kCls,
             trainer::MakeTask("classification").value(), kNumLabels) {
  model_->bert()->set_fused_qkv(o.qkv == "fused");
  trainer::SetFusedNorm(o.kernels == "fused");
  trainer::SetFusedLinear(o.kernels == "fused");
  model_->to(device);
  model_->train();
  params_ = model_->TrainableParameters();
  if (group != nullptr) {
    grad_sync_ = std::make_unique<trainer::GradSync>(
        group, params_, o.bucket_mb << 20,
        o.grad_comm == "bf16" ? c10::optional<torch::ScalarType>(torch::kBFloat16) : c10::nullopt);
    grad_sync_->set_overlap(!o.no_overlap);
    const absl::Status s = grad_sync_->BroadcastParameters();
    TORCH_CHECK(s.ok(), std::string(s.message()));
  }
  const auto longs = torch::TensorOptions().dtype(torch::kLong).device(device);
  batch_.size = o.batch;
  batch_.first.input_ids = torch::randint(1000, 30000, {o.batch, o.seq}, longs);
  // No padding: the anchor's attention mask is all ones, which transformers drops before SDPA;
  // an unpadded batch passes none either (trainer/model/bert_model.h).
  batch_.first.padded = false;
  batch_.labels = torch::randint(0, kNumLabels, {o.batch}, longs);
  if (o.variant == "eager") {
    eager_ = std::make_unique<torch::optim::AdamW>(params_, torch::optim::AdamWOptions(kLr)
                                                                .betas({kBeta1, kBeta2})
                                                                .eps(kEps)
                                                                .weight_decay(kWeightDecay));
  } else if (o.optimizer_per_bucket && grad_sync_ != nullptr) {
    // One optimizer per gradient bucket (the same arithmetic per parameter), stepped from
    // GradSync::Finish as each bucket's mean arrives.
    for (int64_t b = 0; b < grad_sync_->num_buckets(); ++b) {
      std::vector<torch::Tensor> bucket;
      for (size_t k : grad_sync_->bucket_params(b)) bucket.push_back(params_[k]);
      bucket_fused_.push_back(std::make_unique<trainer::AdamW>(
          bucket, trainer::AdamWOptions{kBeta1, kBeta2, kEps, kWeightDecay}));
    }
  } else {
    fused_ = std::make_unique<trainer::AdamW>(
        params_, trainer::AdamWOptions{kBeta1, kBeta2, kEps, kWeightDecay});
  }
}

torch::Tensor ThroughputTrainer::ForwardBackward(const trainer::TaskBatch& batch) {
  if (grad_sync_ != nullptr) grad_sync_->ZeroGrads();
  torch::Tensor loss;
  {
    trainer::AutocastScope autocast(device_.type(), precision_);
    loss = model_->Loss(batch);
  }
  Mark(1);
  loss.backward();
  Mark(2);
  if (grad_sync_ != nullptr) {
    std::function<void(int64_t)> after_bucket;
    if (!bucket_fused_.empty()) {
      after_bucket = [this](int64_t b) { bucket_fused_[static_cast<size_t>(b)]->Step(kLr); };
    }
    const absl::Status s = grad_sync_->Finish(after_bucket);
    TORCH_CHECK(s.ok(), std::string(s.message()));
  }
  Mark(3);
  return loss.detach();
}

void ThroughputTrainer::OptimizerStep() {
  if (eager_ != nullptr) {
    eager_->step();
  } else if (fused_ != nullptr) {
    fused_->Step(kLr);
  }  // else the bucket optimizers stepped in ForwardBackward
}

void ThroughputTrainer::ClearGrads() {
  if (grad_sync_ != nullptr) return;  // bucket views stay; ForwardBackward zeroes them
  for (torch::Tensor& p : params_) p.mutable_grad() = torch::Tensor();
}

torch::Tensor ThroughputTrainer::Step() {
  Mark(0);
  torch::Tensor loss = ForwardBackward(batch_);
  OptimizerStep();
  Mark(4);
  ClearGrads();
  return loss;
}

const trainer::TaskBatch& ThroughputTrainer::host_batch() {
  if (!host_batch_.labels.defined()) host_batch_ = batch_.To(torch::kCPU);
  return host_batch_;
}

}  // namespace bench
}  // namespace tunefleet
