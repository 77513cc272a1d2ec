#include "trainer/tasks/task_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "trainer/distributed/all_gather.h"
#include "trainer/tasks/losses.h"

namespace tunefleet {
namespace trainer {

TaskModelImpl::TaskModelImpl(BertModel bert, Pooling pooling, TaskType type, int64_t num_labels)
    : bert_(std::move(bert)),
      pooling_(pooling),
      type_(type),
      classifier_dropout_(bert_->config().hidden_dropout_prob) {
  register_module("bert", bert_);
  const int64_t h = bert_->config().hidden_size;
  if (type == TaskType::kNli) {
    classifier_ = register_module("classifier", torch::nn::Linear(3 * h, num_labels));
  } else if (type == TaskType::kClassification) {
    classifier_ = register_module("classifier", torch::nn::Linear(h, num_labels));
    torch::NoGradGuard no_grad;
    classifier_->weight.normal_(0.0, 0.02);
    classifier_->bias.zero_();
  }
}

torch::Tensor TaskModelImpl::Embed(const TextBatch& batch) {
  const BertOutput out = bert_->forward(batch.input_ids, batch.token_type_ids,
                                        batch.padded ? batch.attention_mask : torch::Tensor());
  return Pool(out.last_hidden_state, batch.attention_mask, pooling_);
}

std::pair<torch::Tensor, torch::Tensor> TaskModelImpl::EmbedPair(const TextBatch& a,
                                                                  const TextBatch& b) {
  const int64_t la = a.input_ids.size(1), lb = b.input_ids.size(1), l = std::max(la, lb);
  const auto pad = [l](const torch::Tensor& t) {
    return t.size(1) == l ? t : torch::constant_pad_nd(t, {0, l - t.size(1)}, 0);
  };
  TextBatch both;
  both.input_ids = torch::cat({pad(a.input_ids), pad(b.input_ids)});
  if (a.token_type_ids.defined() && b.token_type_ids.defined()) {
    both.token_type_ids = torch::cat({pad(a.token_type_ids), pad(b.token_type_ids)});
  }
  both.attention_mask = torch::cat({pad(a.attention_mask), pad(b.attention_mask)});
  both.padded = a.padded || b.padded || la != lb;
  const torch::Tensor e = Embed(both);
  const int64_t na = a.input_ids.size(0);
  return {e.narrow(0, 0, na), e.narrow(0, na, e.size(0) - na)};
}

torch::Tensor TaskModelImpl::Logits(const TaskBatch& batch) {
  TORCH_CHECK(!classifier_.is_empty(), "task ", TaskTypeName(type_), " has no classifier");
  if (type_ == TaskType::kNli) {
    const auto [u, v] = EmbedPair(batch.first, batch.second);
    return classifier_(torch::cat({u, v, torch::abs(u - v)}, 1));
  }
  const BertOutput out =
      bert_->forward(batch.first.input_ids, batch.first.token_type_ids,
                     batch.first.padded ? batch.first.attention_mask : torch::Tensor());
  TORCH_CHECK(out.pooler_output.defined(),
              "classification needs a model with a pooler; this checkpoint has none");
  return classifier_(torch::dropout(out.pooler_output, classifier_dropout_, is_training()));
}

torch::Tensor TaskModelImpl::Loss(const TaskBatch& batch) {
  switch (type_) {
    case TaskType::kSts: {
      const auto [u, v] = EmbedPair(batch.first, batch.second);
      return CosineSimilarityLoss(u, v, batch.scores);
    }
    case TaskType::kMnrl: {
      const auto [anchors, positives] = EmbedPair(batch.first, batch.second);
      if (group_ != nullptr && mnrl_gather_ && group_->size() > 1) {
        return MultipleNegativesRankingLoss(anchors, AllGatherWithGrad(group_, positives),
                                            kMnrlScale, group_->rank() * anchors.size(0));
      }
      return MultipleNegativesRankingLoss(anchors, positives);
    }
    default:
      return ClassificationLoss(Logits(batch).to(torch::kFloat), batch.labels);
  }
}

std::vector<torch::Tensor> TaskModelImpl::TrainableParameters() {
  std::vector<torch::Tensor> out;
  for (const auto& item : named_parameters(/*recurse=*/true)) {
    if (type_ != TaskType::kClassification && absl::StartsWith(item.key(), "bert.pooler.")) continue;
    out.push_back(item.value());
  }
  return out;
}

std::map<std::string, torch::Tensor> TaskModelImpl::HeadStateDict() const {
  if (classifier_.is_empty()) return {};
  return {{"classifier.weight", classifier_->weight}, {"classifier.bias", classifier_->bias}};
}

absl::Status TaskModelImpl::LoadHead(const std::map<std::string, torch::Tensor>& tensors) {
  std::map<std::string, torch::Tensor> head = HeadStateDict();
  if (head.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("task ", TaskTypeName(type_), " has no classifier head to load"));
  }
  for (const auto& [name, tensor] : tensors) {
    auto it = head.find(name);
    if (it == head.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected head tensor \"", name,
                                                     "\" (expected classifier.weight, classifier.bias)"));
    }
    if (tensor.sizes() != it->second.sizes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "size mismatch for ", name, ": the file has [", absl::StrJoin(tensor.sizes(), ", "),
          "], the head needs [", absl::StrJoin(it->second.sizes(), ", "), "]"));
    }
  }
  if (tensors.size() != head.size()) {
    return absl::InvalidArgumentError("the head file must hold classifier.weight and classifier.bias");
  }
  torch::NoGradGuard no_grad;
  for (auto& [name, param] : head) param.copy_(tensors.at(name));
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
