// The BERT model family (trainer/model/model_family.h): config.json with model_type "bert" (or
// none, as older BERT folders have it), transformers' BertModel weights.
//   - config: trainer/model/bert_config.h (transformers' BertConfig);
//   - weights: BertModel's state_dict names; read with or without the "bert." prefix
//     (BertForPreTraining / BertForMaskedLM checkpoints carry it), legacy LayerNorm.gamma/beta as
//     weight/bias, the saved buffer embeddings.position_ids ignored; written as BertModel names.
// Thread-safety: immutable.
#ifndef TUNEFLEET_TRAINER_MODEL_BERT_FAMILY_H_
#define TUNEFLEET_TRAINER_MODEL_BERT_FAMILY_H_

#include "trainer/model/model_family.h"

namespace tunefleet {
namespace trainer {

const ModelFamily& BertFamily();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_BERT_FAMILY_H_
