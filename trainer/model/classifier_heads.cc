#include "trainer/model/classifier_heads.h"

#include <utility>

#include <torch/nn/functional/activation.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "trainer/io/hf_folder_util.h"
#include "trainer/model/model_family_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kClassifier[] = "classifier.";
constexpr char kPreClassifier[] = "pre_classifier.";

// config.json's number `key` in `config`'s source text, else `fallback` (also for a null).
double SourceNumber(const BertConfig& config, const char* key, double fallback) {
  if (config.source_json.empty()) return fallback;
  const Json j = Json::parse(config.source_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// A new Linear(in, out) initialised as transformers' _init_weights: weight normal(0, std), bias
// 0. (The Linear's own initialisation runs first: a BERT head draws as tunefleet always has.)
torch::nn::Linear NewLinear(int64_t in, int64_t out, double std) {
  torch::nn::Linear linear(in, out);
  torch::NoGradGuard no_grad;
  linear->weight.normal_(0.0, std);
  linear->bias.zero_();
  return linear;
}

}  // namespace

ParameterShapeList ClassifierHeadShapes(ClassifierHead head, int64_t hidden, int64_t labels) {
  switch (head) {
    case ClassifierHead::kPooler:
      return {{"classifier.weight", {labels, hidden}}, {"classifier.bias", {labels}}};
    case ClassifierHead::kDenseTanh:
      return {{"classifier.dense.weight", {hidden, hidden}},
              {"classifier.dense.bias", {hidden}},
              {"classifier.out_proj.weight", {labels, hidden}},
              {"classifier.out_proj.bias", {labels}}};
    case ClassifierHead::kPreClassifier:
      return {{"pre_classifier.weight", {hidden, hidden}},
              {"pre_classifier.bias", {hidden}},
              {"classifier.weight", {labels, hidden}},
              {"classifier.bias", {labels}}};
    case ClassifierHead::kNone:
      break;
  }
  return {};
}

bool IsClassifierHeadTensor(ClassifierHead head, absl::string_view name) {
  return absl::StartsWith(name, kClassifier) ||
         (head == ClassifierHead::kPreClassifier && absl::StartsWith(name, kPreClassifier));
}

bool ClassifierHeadUsesPooler(ClassifierHead head) { return head == ClassifierHead::kPooler; }

int64_t ClassifierHeadLabels(const std::map<std::string, torch::Tensor>& tensors) {
  for (const char* name : {"classifier.out_proj.bias", "classifier.bias"}) {
    if (auto it = tensors.find(name); it != tensors.end()) return it->second.numel();
  }
  return 0;
}

ClassifierHeadImpl::ClassifierHeadImpl(ClassifierHead head, int64_t hidden, int64_t labels,
                                       double dropout, double initializer_range)
    : kind_(head), dropout_(dropout) {
  switch (head) {
    case ClassifierHead::kPooler: {
      torch::nn::Linear classifier = NewLinear(hidden, labels, initializer_range);
      weight_ = register_parameter("weight", classifier->weight);
      bias_ = register_parameter("bias", classifier->bias);
      break;
    }
    case ClassifierHead::kDenseTanh:
      inner_ = register_module("dense", NewLinear(hidden, hidden, initializer_range));
      outer_ = register_module("out_proj", NewLinear(hidden, labels, initializer_range));
      break;
    case ClassifierHead::kPreClassifier:
      inner_ = register_module("pre_classifier", NewLinear(hidden, hidden, initializer_range));
      outer_ = register_module("classifier", NewLinear(hidden, labels, initializer_range));
      break;
    case ClassifierHead::kNone:
      TORCH_CHECK(false, "this model family has no sequence classification head");
  }
}

torch::Tensor ClassifierHeadImpl::Forward(const torch::Tensor& hidden_states,
                                          const torch::Tensor& pooler_output, bool training) {
  switch (kind_) {
    case ClassifierHead::kPooler:
      TORCH_CHECK(pooler_output.defined(),
                  "a cross-encoder needs a model with a pooler; this checkpoint has none");
      return torch::linear(torch::dropout(pooler_output, dropout_, training), weight_, bias_);
    case ClassifierHead::kDenseTanh: {
      torch::Tensor x = torch::dropout(hidden_states.select(1, 0), dropout_, training);
      x = torch::tanh(inner_(x));
      return outer_(torch::dropout(x, dropout_, training));
    }
    case ClassifierHead::kPreClassifier: {
      const torch::Tensor x = torch::relu(inner_(hidden_states.select(1, 0)));
      return outer_(torch::dropout(x, dropout_, training));
    }
    case ClassifierHead::kNone:
      break;
  }
  TORCH_CHECK(false, "no sequence classification head");
}

std::map<std::string, torch::Tensor> ClassifierHeadImpl::StateDict() const {
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : named_parameters(/*recurse=*/true)) {
    // DistilBERT's head is two top-level modules of its class; the others' live in "classifier".
    out[kind_ == ClassifierHead::kPreClassifier ? item.key()
                                                : absl::StrCat(kClassifier, item.key())] =
        item.value();
  }
  return out;
}

ClassifierHeadModule MakeClassifierHead(const BertConfig& config, int64_t labels) {
  const ClassifierHead head = FamilyOf(config).classifier_head();
  const double dropout = head == ClassifierHead::kPreClassifier
                             ? SourceNumber(config, "seq_classif_dropout", 0.2)
                             : config.hidden_dropout_prob;
  return ClassifierHeadModule(head, config.hidden_size, labels, dropout,
                              SourceNumber(config, "initializer_range", 0.02));
}

}  // namespace trainer
}  // namespace tunefleet
