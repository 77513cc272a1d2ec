// task.type classification: transformers' BertForSequenceClassification: the pair as one text
// [CLS] a [SEP] b [SEP], a head Linear(H, K) (normal(0, 0.02), bias 0) over
// dropout(pooler_output), cross entropy against the label; evaluated by accuracy. Needs an
// encoder with a pooler; takes task.num_labels (0: from the data) and model.head.
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_CLASSIFICATION_TASK_H_
#define TUNEFLEET_TRAINER_TASKS_CLASSIFICATION_TASK_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& ClassificationLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_CLASSIFICATION_TASK_H_
