// The RoBERTa and XLM-RoBERTa model families (trainer/model/model_family.h): config.json with
// model_type "roberta" / "xlm-roberta", transformers' RobertaModel / XLMRobertaModel weights (the
// same encoder; XLM-R differs in its tokenizer).
//   - config: transformers' RobertaConfig / XLMRobertaConfig, BERT's keys
//     (trainer/model/bert_config.h); position ids count from pad_token_id + 1 over the
//     non-padding tokens (padded_position_ids), so the longest input is max_position_embeddings
//     - pad_token_id - 1 (514 - 2 for roberta-base); type_vocab_size is 1 in released models, and
//     the token_type_ids of a pair are then ignored, as RoBERTa's tokenizers give none;
//   - weights: BertModel's names, read with or without the "roberta." prefix (RobertaForMaskedLM
//     and the other task models carry it), the saved buffer embeddings.position_ids ignored;
//     written as RobertaModel names.
// The tokenizer is the folder's (trainer/data/tokenizer_folder.h): klue/roberta-* have a cased
// WordPiece BertTokenizer, XLM-R a SentencePiece unigram model.
// Thread-safety: immutable.
#ifndef TUNEFLEET_TRAINER_MODEL_ROBERTA_FAMILY_H_
#define TUNEFLEET_TRAINER_MODEL_ROBERTA_FAMILY_H_

#include "trainer/model/model_family.h"

namespace tunefleet {
namespace trainer {

const ModelFamily& RobertaFamily();
const ModelFamily& XlmRobertaFamily();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_ROBERTA_FAMILY_H_
