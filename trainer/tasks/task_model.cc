#include "trainer/tasks/task_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace trainer {
namespace {

// The head's tensor names, joined by `separator`.
std::string HeadNames(const std::map<std::string, torch::Tensor>& head,
                      absl::string_view separator = ", ") {
  return absl::StrJoin(head, separator,
                       [](std::string* out, const auto& item) { out->append(item.first); });
}

}  // namespace

TaskModelImpl::TaskModelImpl(BertModel bert, Pooling pooling, TaskPtr task, int64_t num_labels)
    : bert_(std::move(bert)), pooling_(pooling), task_(std::move(task)) {
  register_module("bert", bert_);
  if (task_->has_head() && task_->family_head()) {
    family_head_ = register_module("classifier", MakeClassifierHead(bert_->config(), num_labels));
  } else if (task_->has_head()) {
    classifier_ =
        register_module("classifier", task_->MakeHead(bert_->config().hidden_size, num_labels));
  }
}

torch::Tensor TaskModelImpl::Embed(const TextBatch& batch) {
  return EmbedMasked(batch, PoolingMask(batch));
}

torch::Tensor TaskModelImpl::PoolingMask(const TextBatch& batch) const {
  return include_prompt_ ? batch.attention_mask
                         : MaskPrompt(batch.attention_mask, batch.prompt_length);
}

torch::Tensor TaskModelImpl::EmbedMasked(const TextBatch& batch, const torch::Tensor& pool_mask) {
  const BertOutput out = bert_->forward(batch.input_ids, batch.token_type_ids,
                                        batch.padded ? batch.attention_mask : torch::Tensor());
  return Pool(out.last_hidden_state, pool_mask, pooling_);
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
  std::vector<torch::Tensor> ids, types, masks, pool_masks;
  TextBatch all;
  all.padded = false;
  bool typed = true;
  for (const TextBatch& t : texts) {
    ids.push_back(pad(t.input_ids));
    typed = typed && t.token_type_ids.defined();
    if (typed) types.push_back(pad(t.token_type_ids));
    masks.push_back(pad(t.attention_mask));
    pool_masks.push_back(pad(PoolingMask(t)));
    all.padded = all.padded || t.padded || t.input_ids.size(1) != l;
  }
  all.input_ids = torch::cat(ids);
  if (typed) all.token_type_ids = torch::cat(types);
  all.attention_mask = torch::cat(masks);
  const torch::Tensor e = EmbedMasked(all, torch::cat(pool_masks));
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
  TORCH_CHECK(has_classifier(), "task ", task_->type(), " has no classifier");
  return task_->Logits(*this, batch);
}

torch::Tensor TaskModelImpl::Loss(const TaskBatch& batch) { return task_->Loss(*this, batch); }

void TaskModelImpl::SetLossModule(std::shared_ptr<torch::nn::Module> module) {
  TORCH_CHECK(loss_module_ == nullptr, "the model has a loss module already");
  for (torch::Tensor& p : module->parameters()) p.requires_grad_(false);
  module->eval();
  loss_module_ = register_module("loss", std::move(module));
}

void TaskModelImpl::train(bool on) {
  torch::nn::Module::train(on);
  if (loss_module_ != nullptr) loss_module_->eval();
}

std::vector<torch::Tensor> TaskModelImpl::TrainableParameters() {
  std::vector<torch::Tensor> out;
  for (const auto& item : named_parameters(/*recurse=*/true)) {
    if (absl::StartsWith(item.key(), "loss.")) continue;  // the loss's frozen module
    if (!uses_pooler() && absl::StartsWith(item.key(), "bert.pooler.")) continue;
    out.push_back(item.value());
  }
  return out;
}

bool TaskModelImpl::uses_pooler() const {
  return task_->uses_pooler() && (family_head_.is_empty() || family_head_->uses_pooler());
}

std::map<std::string, torch::Tensor> TaskModelImpl::HeadStateDict() const {
  if (!family_head_.is_empty()) return family_head_->StateDict();
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
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected head tensor \"", name, "\" (expected ", HeadNames(head), ")"));
    }
    if (tensor.sizes() != it->second.sizes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "size mismatch for ", name, ": the file has [", absl::StrJoin(tensor.sizes(), ", "),
          "], the head needs [", absl::StrJoin(it->second.sizes(), ", "), "]"));
    }
  }
  if (tensors.size() != head.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the head file must hold ", HeadNames(head, " and ")));
  }
  torch::NoGradGuard no_grad;
  for (auto& [name, param] : head) param.copy_(tensors.at(name));
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
