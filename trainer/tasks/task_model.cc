#include "trainer/tasks/task_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace trainer {

TaskModelImpl::TaskModelImpl(BertModel bert, Pooling pooling, TaskPtr task, int64_t num_labels)
    : bert_(std::move(bert)),
      pooling_(pooling),
      task_(std::move(task)),
      classifier_dropout_(bert_->config().hidden_dropout_prob) {
  register_module("bert", bert_);
  if (task_->has_head()) {
    classifier_ =
        register_module("classifier", task_->MakeHead(bert_->config().hidden_size, num_labels));
  }
}

torch::Tensor TaskModelImpl::Embed(const TextBatch& batch) {
  const BertOutput out = bert_->forward(batch.input_ids, batch.token_type_ids,
                                        batch.padded ? batch.attention_mask : torch::Tensor());
  return Pool(out.last_hidden_state, batch.attention_mask, pooling_);
}

std::pair<torch::Tensor, torch::Tensor> TaskModelImpl::EmbedPair(const TextBatch& a,
                                                                 const TextBatch& b) {
  std::vector<torch::Tensor> e = EmbedAll({a, b});
  return {e[0], e[1]};
}

std::vector<torch::Tensor> TaskModelImpl::EmbedAll(const std::vector<TextBatch>& texts) {
  if (texts.size() == 1) return {Embed(texts[0])};
  int64_t l = 0;
  for (const TextBatch& t : texts) l = std::max(l, t.input_ids.size(1));
  const auto pad = [l](const torch::Tensor& t) {
    return t.size(1) == l ? t : torch::constant_pad_nd(t, {0, l - t.size(1)}, 0);
  };
  std::vector<torch::Tensor> ids, types, masks;
  TextBatch all;
  all.padded = false;
  bool typed = true;
  for (const TextBatch& t : texts) {
    ids.push_back(pad(t.input_ids));
    typed = typed && t.token_type_ids.defined();
    if (typed) types.push_back(pad(t.token_type_ids));
    masks.push_back(pad(t.attention_mask));
    all.padded = all.padded || t.padded || t.input_ids.size(1) != l;
  }
  all.input_ids = torch::cat(ids);
  if (typed) all.token_type_ids = torch::cat(types);
  all.attention_mask = torch::cat(masks);
  const torch::Tensor e = Embed(all);
  std::vector<torch::Tensor> out;
  int64_t begin = 0;
  for (const TextBatch& t : texts) {
    const int64_t n = t.input_ids.size(0);
    out.push_back(e.narrow(0, begin, n));
    begin += n;
  }
  return out;
}

torch::Tensor TaskModelImpl::Logits(const TaskBatch& batch) {
  TORCH_CHECK(!classifier_.is_empty(), "task ", task_->type(), " has no classifier");
  return task_->Logits(*this, batch);
}

torch::Tensor TaskModelImpl::Loss(const TaskBatch& batch) { return task_->Loss(*this, batch); }

std::vector<torch::Tensor> TaskModelImpl::TrainableParameters() {
  std::vector<torch::Tensor> out;
  for (const auto& item : named_parameters(/*recurse=*/true)) {
    if (!task_->uses_pooler() && absl::StartsWith(item.key(), "bert.pooler.")) continue;
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
        absl::StrCat("task ", task_->type(), " has no classifier head to load"));
  }
  for (const auto& [name, tensor] : tensors) {
    auto it = head.find(name);
    if (it == head.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected head tensor \"", name, "\" (expected classifier.weight, classifier.bias)"));
    }
    if (tensor.sizes() != it->second.sizes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "size mismatch for ", name, ": the file has [", absl::StrJoin(tensor.sizes(), ", "),
          "], the head needs [", absl::StrJoin(it->second.sizes(), ", "), "]"));
    }
  }
  if (tensors.size() != head.size()) {
    return absl::InvalidArgumentError(
        "the head file must hold classifier.weight and classifier.bias");
  }
  torch::NoGradGuard no_grad;
  for (auto& [name, param] : head) param.copy_(tensors.at(name));
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
