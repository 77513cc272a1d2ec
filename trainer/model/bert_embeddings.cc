#include "trainer/model/bert_embeddings.h"

#include "trainer/model/positions.h"

namespace tunefleet {
namespace trainer {

BertEmbeddingsImpl::BertEmbeddingsImpl(const BertConfig& c)
    : dropout_(c.hidden_dropout_prob),
      padded_positions_(c.padded_position_ids),
      pad_(c.pad_token_id) {
  word_ = register_module(
      "word_embeddings",
      torch::nn::Embedding(
          torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(c.pad_token_id)));
  auto positions = torch::nn::EmbeddingOptions(c.max_position_embeddings, c.hidden_size);
  if (padded_positions_) positions.padding_idx(pad_);
  position_ = register_module("position_embeddings", torch::nn::Embedding(positions));
  if (c.type_vocab_size > 0) {
    token_type_ = register_module("token_type_embeddings",
                                  torch::nn::Embedding(c.type_vocab_size, c.hidden_size));
  }
  norm_ = register_module(
      "LayerNorm",
      torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& ids,
                                          const torch::Tensor& token_types) {
  const torch::Tensor positions = padded_positions_
                                      ? PaddedPositionIds(ids, pad_)
                                      : torch::arange(ids.size(1), ids.options()).unsqueeze(0);
  torch::Tensor x = word_(ids);
  if (token_type_)
    x = x + token_type_(token_types.defined() ? token_types : torch::zeros_like(ids));
  x = x + position_(positions);
  return torch::dropout(norm_(x), dropout_, is_training());
}

}  // namespace trainer
}  // namespace tunefleet
