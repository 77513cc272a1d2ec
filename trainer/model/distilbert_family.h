// The DistilBERT model family (trainer/model/model_family.h): config.json with model_type
// "distilbert", transformers' DistilBertModel weights (distilbert-base-uncased,
// sentence-transformers' msmarco-distilbert-* and their kin).
//   - config: transformers' DistilBertConfig, whose keys are not BERT's: vocab_size, dim (the
//     hidden size), n_layers, n_heads, hidden_dim (the FFN's), activation, max_position_embeddings,
//     dropout and attention_dropout (the shared encoder's hidden and attention dropout),
//     pad_token_id; sinusoidal_pos_embds, when present, must be false (learned positions only).
//     The encoder is BERT's post-LN one with LayerNorm eps 1e-12 (fixed, as DistilBertModel has
//     it), positions 0, 1, 2, ... (not after the padding id), no token type embeddings
//     (token_type_ids are ignored) and no pooler (DistilBertModel has none: ParameterShapes never
//     lists pooler.*, whatever with_pooler says, so a loaded model has no pooler). Written back
//     in DistilBertConfig's keys, the keys the config does not model kept;
//   - weights: DistilBertModel's names, read with or without the "distilbert." prefix
//     (DistilBertForMaskedLM and the other task models), the saved buffer
//     embeddings.position_ids ignored. The embeddings are named as BERT's; the layers are
//     transformer.layer.N, whose attention.{q,k,v}_lin are encoder.layer.N.attention.self.
//     {query,key,value}, attention.out_lin is attention.output.dense, sa_layer_norm is
//     attention.output.LayerNorm, ffn.lin1 and ffn.lin2 are intermediate.dense and output.dense,
//     output_layer_norm is output.LayerNorm; written back under DistilBertModel's names.
// The tokenizer is the folder's (trainer/data/tokenizer_folder.h): DistilBertTokenizer is a
// WordPiece with [CLS] A [SEP] B [SEP].
// Thread-safety: immutable.
#ifndef TUNEFLEET_TRAINER_MODEL_DISTILBERT_FAMILY_H_
#define TUNEFLEET_TRAINER_MODEL_DISTILBERT_FAMILY_H_

#include "trainer/model/model_family.h"

namespace tunefleet {
namespace trainer {

const ModelFamily& DistilBertFamily();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_DISTILBERT_FAMILY_H_
