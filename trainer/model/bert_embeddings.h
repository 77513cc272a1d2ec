// The shared encoder's embeddings module (trainer/model/bert_model.h), as transformers'
// BertEmbeddings: word + token_type + position embeddings, LayerNorm(layer_norm_eps), dropout.
// Position ids are 0, 1, 2, ..., or after the padding id (padded_position_ids: RoBERTa, MPNet;
// trainer/model/positions.h); there are no token_type_embeddings when type_vocab_size is 0
// (MPNet). Parameter names are BertModel's state_dict names under "embeddings."
// ("word_embeddings.weight", "position_embeddings.weight", "token_type_embeddings.weight",
// "LayerNorm.weight", "LayerNorm.bias"); BertModelImpl initializes them.
// Thread-safety: a module is not thread-safe; use one per thread (or per DDP rank).
#ifndef TUNEFLEET_TRAINER_MODEL_BERT_EMBEDDINGS_H_
#define TUNEFLEET_TRAINER_MODEL_BERT_EMBEDDINGS_H_

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>
#include <torch/types.h>

#include "trainer/model/bert_config.h"

namespace tunefleet {
namespace trainer {

class BertEmbeddingsImpl : public torch::nn::Module {
 public:
  explicit BertEmbeddingsImpl(const BertConfig& c);

  // ids int64 [B, T] -> [B, T, H]; token_types undefined: zeros.
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& token_types);

 private:
  double dropout_;
  bool padded_positions_;
  int64_t pad_;
  torch::nn::Embedding word_{nullptr}, position_{nullptr}, token_type_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_BERT_EMBEDDINGS_H_
