// What `trainer encode` and `trainer eval` share once their flags are parsed: the checks of
// --batch_size and --device, the model folder's encoder and tokenizer (as its model family reads
// them, trainer/model/model_family.h), the defaults --pooling and --max_len take from the
// folder, and the device --device picks. The commands declare their own flags (their help texts
// and defaults differ).
// Thread-safety: free functions without shared state.
#ifndef TUNEFLEET_TRAINER_MODEL_INFERENCE_MODEL_H_
#define TUNEFLEET_TRAINER_MODEL_INFERENCE_MODEL_H_

#include <cstdint>
#include <string>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/data/tokenizer.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/hf_model_folder.h"
#include "trainer/model/pooling.h"

namespace tunefleet {
namespace trainer {

// The first of: --batch_size must be >= 1; --device must be auto, cpu or cuda.
absl::Status CheckBatchSizeAndDevice(int64_t batch_size, const std::string& device);

// A model folder loaded for inference: the encoder on the CPU in eval mode, the checkpoint's
// report, and its tokenizer (the folder's, as trainer/data/tokenizer_folder.h picks it).
struct InferenceModel {
  BertModel bert;
  BertCheckpoint info;
  std::shared_ptr<const Tokenizer> tokenizer;
};

// LoadBertModel(dir), then LoadFolderTokenizer(dir); their errors as is.
absl::StatusOr<InferenceModel> LoadInferenceModel(const std::string& dir);

// The --pooling name to use: `flag` when given, else the folder's sentence-transformers pooling,
// else "mean". ParsePooling tells whether it is one tunefleet has.
std::string PoolingNameOrDefault(const std::string& flag, const BertCheckpoint& info);

// --max_len when given (nonzero), else the folder's max_seq_length, else 128; at most the
// model's max_position_embeddings.
int64_t MaxLenOrDefault(int64_t flag, const BertCheckpoint& info);

// Where --device runs the model: the CPU for "cpu", else SelectDevice(local_rank)'s device
// (local_rank < 0: not distributed); FailedPrecondition for "cuda" on a host without CUDA.
absl::StatusOr<torch::Device> TargetDevice(const std::string& device, int local_rank);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_INFERENCE_MODEL_H_
