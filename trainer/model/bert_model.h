// The BERT encoder of Hugging Face transformers' BertModel, as LibTorch modules, shared by the
// model families (trainer/model/model_family.h), whose config fields pick their variants:
//   embeddings: word + token_type + position, LayerNorm(eps), dropout; position ids 0, 1, 2, ...
//   or after the padding id (padded_position_ids: RoBERTa, MPNet); no token_type_embeddings when
//   type_vocab_size is 0 (MPNet), token_type_ids ignored when it is at most 1;
//   N layers: self-attention (softmax(QK^T/sqrt(d) + bias) V; scaled_dot_product_attention on
//   LibTorch >= 2.0; bias = padding mask, plus MPNet's relative position bias from
//   encoder.relative_attention_bias, computed once per forward: trainer/model/positions.h),
//   dense + dropout + residual LayerNorm, feed-forward (hidden_act, GELU = erf),
//   dense + dropout + residual LayerNorm; pooler: tanh(dense(state of [CLS])).
// The additive attention mask is (1 - mask) * lowest value of the compute dtype, as transformers
// builds it. Parameter names are exactly BertModel's state_dict names (the families map theirs)
// ("embeddings.word_embeddings.weight", "encoder.layer.0.attention.self.query.weight", ...,
// "pooler.dense.weight"), so checkpoints load and save by name (trainer/model/hf_model_folder.h).
// Fresh parameters are initialised like transformers (normal(0, 0.02), zero biases, LayerNorm 1/0,
// the padding row of the word embeddings zero).
// Thread-safety: a module is not thread-safe; use one per thread (or per DDP rank).
#ifndef TUNEFLEET_TRAINER_MODEL_BERT_MODEL_H_
#define TUNEFLEET_TRAINER_MODEL_BERT_MODEL_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/model/hf_model_folder.h"

namespace tunefleet {
namespace trainer {

struct BertOutput {
  torch::Tensor last_hidden_state;  // [B, T, H]
  torch::Tensor pooler_output;      // [B, H]; undefined when the model has no pooler
};

class BertDenseImpl;
class BertEmbeddingsImpl;
class BertLayerImpl;

class BertModelImpl : public torch::nn::Module {
 public:
  // `init_weights`: initialize the weights as transformers does (normal(0, 0.02), biases 0,
  // LayerNorm 1 / 0); false when they are about to be overwritten (LoadBertWeights): the dense
  // layers' weights (85M of BERT-base's 110M) are then left uninitialized, which saves about a
  // second of random numbers on the CPU.
  explicit BertModelImpl(const BertConfig& config, bool add_pooling_layer = true,
                         bool init_weights = true);

  // int64 [B, T] each; token_type_ids and attention_mask may be undefined (zeros / all ones:
  // without a mask nothing is masked, and the attention may use the flash kernel).
  // Throws c10::Error on bad input (BertForward checks and returns a Status instead).
  BertOutput forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids = {},
                     const torch::Tensor& attention_mask = {});

  const BertConfig& config() const { return config_; }
  // Activation checkpointing per layer in training (trainer/model/bert_model.cc's
  // CheckpointedLayer): about one layer's activations are kept instead of all, for one more forward
  // pass.
  void set_gradient_checkpointing(bool on) { gradient_checkpointing_ = on; }
  bool gradient_checkpointing() const { return gradient_checkpointing_; }
  // Query, key and value projections as one GEMM (default) or three, as transformers runs them.
  void set_fused_qkv(bool on);
  bool has_pooler() const { return pooler_dense_ != nullptr; }

 private:
  BertConfig config_;
  bool gradient_checkpointing_ = false;
  std::shared_ptr<BertEmbeddingsImpl> embeddings_;
  std::vector<std::shared_ptr<BertLayerImpl>> layers_;
  std::shared_ptr<BertDenseImpl> pooler_dense_;
  torch::nn::Embedding relative_attention_bias_{nullptr};  // MPNet's; null without
};
TORCH_MODULE(BertModel);

// Checks the inputs (shapes, dtypes, id ranges, length <= MaxSequenceLength), then runs
// the model; LibTorch errors become a Status.
absl::StatusOr<BertOutput> BertForward(BertModel& model, const torch::Tensor& input_ids,
                                       const torch::Tensor& token_type_ids,
                                       const torch::Tensor& attention_mask);

// Copies `tensors` (BertModel names) into the model's parameters. Every parameter must be given
// with its shape, and every tensor must name a parameter.
absl::Status LoadBertWeights(BertModel& model, const std::map<std::string, torch::Tensor>& tensors);
// The same, but the model takes over the tensors that need no conversion (contiguous, on the
// parameter's device, of its dtype) instead of copying them: for tensors read for this model
// alone (a checkpoint just loaded), it saves a copy of the weights into freshly faulted memory.
absl::Status LoadBertWeights(BertModel& model, std::map<std::string, torch::Tensor>&& tensors);

// The parameters by name (the tensors themselves, not copies).
std::map<std::string, torch::Tensor> BertStateDict(const BertModel& model);

// Loads a Hugging Face model folder (trainer/model/hf_model_folder.h) into a model on the CPU in
// eval mode. A checkpoint without pooler weights gives a model without pooler (a warning is
// logged). `info`, when given, receives the checkpoint's report (tensors cleared).
absl::StatusOr<BertModel> LoadBertModel(const std::string& dir, BertCheckpoint* info = nullptr);

// Writes the model's config and parameters as a Hugging Face model folder.
absl::Status SaveBertModel(const BertModel& model, const std::string& dir,
                           const CheckpointSaveOptions& options = {});

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_BERT_MODEL_H_
