// A cross-encoder folder (transformers' *ForSequenceClassification layout, as `trainer train`
// writes one for model.kind: cross_encoder and sentence-transformers' CrossEncoder saves one)
// loaded for `trainer predict` and `trainer eval --eval_kind reranking`: the encoder, its
// family's head (trainer/model/classifier_heads.h; K outputs: task type cross_encoder for K = 1,
// classification otherwise), the folder's tokenizer, and the longest pair it takes (--max_len, else
// the model's position limit, as CrossEncoder caps the tokenizer's model_max_length).
// Thread-safety: free functions.
#ifndef TUNEFLEET_TRAINER_COMMANDS_CROSS_ENCODER_FOLDER_H_
#define TUNEFLEET_TRAINER_COMMANDS_CROSS_ENCODER_FOLDER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "trainer/data/tokenizer.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

struct CrossEncoderFolder {
  TaskModel model{nullptr};  // on the CPU, in eval mode
  std::shared_ptr<const Tokenizer> tokenizer;
  int64_t max_len = 0;
  int64_t num_labels = 0;
};

// Errors name the folder: not a model folder, no head ("not a cross-encoder"), a head of the
// wrong names or shapes.
absl::StatusOr<CrossEncoderFolder> LoadCrossEncoderFolder(const std::string& dir,
                                                          int64_t max_len_flag);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_CROSS_ENCODER_FOLDER_H_
