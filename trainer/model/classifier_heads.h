// A cross-encoder's sequence classification head, as each model family's transformers
// *ForSequenceClassification class has it (ModelFamily::classifier_head,
// trainer/model/model_family.h), over the shared encoder's output:
//   - BERT (BertForSequenceClassification): dropout(pooler output) -> classifier; tensors
//     classifier.weight [K, H], classifier.bias [K].
//   - RoBERTa, XLM-R, MPNet (RobertaClassificationHead, MPNetClassificationHead): the first
//     token's state -> dropout -> classifier.dense -> tanh -> dropout -> classifier.out_proj;
//     tensors classifier.dense.{weight,bias} [H, H] [H], classifier.out_proj.{weight,bias} [K, H]
//     [K]. The encoder's pooler is not used (the class has none).
//   - DistilBERT (DistilBertForSequenceClassification): the first token's state ->
//     pre_classifier -> ReLU -> dropout -> classifier; tensors pre_classifier.{weight,bias}
//     [H, H] [H], classifier.{weight,bias} [K, H] [K].
// The dropout is the encoder's hidden dropout (model.dropout), as transformers' when
// classifier_dropout is unset; DistilBERT's is config.json's seq_classif_dropout (default 0.2).
// A new head is initialised as transformers' _init_weights: weights normal(0,
// initializer_range) (config.json's, default 0.02), biases 0. The head's tensors carry the names
// the class saves them under, in the files and in StateDict.
// Thread-safety: the free functions are stateless; a head module is used from one thread.
#ifndef TUNEFLEET_TRAINER_MODEL_CLASSIFIER_HEADS_H_
#define TUNEFLEET_TRAINER_MODEL_CLASSIFIER_HEADS_H_

#include <cstdint>
#include <map>
#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "absl/strings/string_view.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/model_family.h"

namespace tunefleet {
namespace trainer {

// The head's tensors (names in the files) and shapes for width `hidden` and `labels` outputs, in
// the class's order; empty for kNone.
ParameterShapeList ClassifierHeadShapes(ClassifierHead head, int64_t hidden, int64_t labels);
// Whether a checkpoint's tensor `name` belongs to `head` (kNone: the names "classifier.*").
bool IsClassifierHeadTensor(ClassifierHead head, absl::string_view name);
// Whether `head` takes the encoder's pooler output (BERT's).
bool ClassifierHeadUsesPooler(ClassifierHead head);
// The number of outputs of a head's tensors (by their names in the files, of any family): the
// length of its last bias (classifier.out_proj.bias, else classifier.bias); 0 without one.
int64_t ClassifierHeadLabels(const std::map<std::string, torch::Tensor>& tensors);

class ClassifierHeadImpl : public torch::nn::Module {
 public:
  // A new head of kind `head` (not kNone) for width `hidden`, initialised as transformers does.
  ClassifierHeadImpl(ClassifierHead head, int64_t hidden, int64_t labels, double dropout,
                     double initializer_range);

  // The logits [B, K] from the encoder's last hidden states [B, L, H] and pooler output [B, H]
  // (undefined without a pooler: then only a head that does not use it works).
  torch::Tensor Forward(const torch::Tensor& hidden_states, const torch::Tensor& pooler_output,
                        bool training);
  // The head's parameters by their names in the files.
  std::map<std::string, torch::Tensor> StateDict() const;

  ClassifierHead kind() const { return kind_; }
  bool uses_pooler() const { return ClassifierHeadUsesPooler(kind_); }
  double dropout() const { return dropout_; }

 private:
  ClassifierHead kind_;
  double dropout_;
  // BERT: the classifier's weight and bias, registered as "weight" and "bias".
  torch::Tensor weight_, bias_;
  // RoBERTa/MPNet: dense, out_proj; DistilBERT: pre_classifier, classifier.
  torch::nn::Linear inner_{nullptr}, outer_{nullptr};
};
TORCH_MODULE_IMPL(ClassifierHeadModule, ClassifierHeadImpl);

// A new head of `config`'s family with `labels` outputs; its dropout config.hidden_dropout_prob
// (DistilBERT: seq_classif_dropout of config.source_json). A family without one (kNone) is a
// TORCH_CHECK failure: callers check ModelFamily::classifier_head.
ClassifierHeadModule MakeClassifierHead(const BertConfig& config, int64_t labels);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_CLASSIFIER_HEADS_H_
