// task.loss softmax, the default of task types nli and classification:
//   nli             sentence-transformers' SoftmaxLoss: Linear(3H, K) on [u; v; |u - v|] of the
//                   pair's embeddings, cross entropy against the label;
//   classification  a cross-encoder, as transformers' BertForSequenceClassification: the pair as
//                   one text, Linear(H, K) on the pooler's output after dropout, cross entropy.
// The head is the model's "classifier."; task.num_labels sets K (0: from the data).
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_SOFTMAX_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_SOFTMAX_LOSS_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& SoftmaxLossKind();
// task.loss ce: sentence-transformers' CrossEntropyLoss for a cross-encoder, the classification
// type's softmax under the name CrossEncoder's trainer gives it (class labels, K outputs).
const LossKind& CeLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_SOFTMAX_LOSS_H_
