// The MPNet model family (trainer/model/model_family.h): config.json with model_type "mpnet",
// transformers' MPNetModel weights (sentence-transformers' all-mpnet-base-v2 and its kin).
//   - config: transformers' MPNetConfig, BERT's keys (trainer/model/bert_config.h) without
//     type_vocab_size (no token_type_embeddings: token_type_ids are ignored) and with
//     relative_attention_num_buckets (encoder.relative_attention_bias, bucketed as MPNetEncoder
//     does, added to every layer's attention scores); position ids as RoBERTa's, from
//     pad_token_id + 1 over the non-padding tokens;
//   - weights: MPNetModel's names, read with or without the "mpnet." prefix (MPNetForMaskedLM),
//     the saved buffer embeddings.position_ids ignored. The encoder is BERT's under other names:
//     attention.attn.{q,k,v} are attention.self.{query,key,value}, attention.attn.o is
//     attention.output.dense and attention.LayerNorm is attention.output.LayerNorm; written back
//     under MPNetModel's names.
// The tokenizer is the folder's (trainer/data/tokenizer_folder.h): MPNetTokenizer is a WordPiece
// with <s> A </s></s> B </s>.
// Thread-safety: immutable.
#ifndef TUNEFLEET_TRAINER_MODEL_MPNET_FAMILY_H_
#define TUNEFLEET_TRAINER_MODEL_MPNET_FAMILY_H_

#include "trainer/model/model_family.h"

namespace tunefleet {
namespace trainer {

const ModelFamily& MpnetFamily();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_MPNET_FAMILY_H_
