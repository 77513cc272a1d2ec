// Hugging Face BERT model folders: reading and writing config.json and the weights, in the layout
// that transformers' BertModel.from_pretrained and sentence-transformers load.
//
// Reading (LoadBertCheckpoint):
//   - config.json: the BertConfig fields below are required; a missing or malformed one is a
//     one-line error naming config.json and the key. model_type, when present, must be "bert".
//   - weights: model.safetensors, else model.safetensors.index.json ("weight_map": tensor ->
//     shard file) and its shards. Each shard must hold exactly the tensors the index maps to it.
//   - names: with or without the "bert." prefix (BertForPreTraining / BertForMaskedLM checkpoints
//     carry it), legacy LayerNorm.gamma/beta read as weight/bias. Tensors that are not BertModel
//     weights ("cls.predictions.*", "cls.seq_relationship.*") are unexpected keys; BertModel weights
//     absent from the file are missing keys; both are logged the way transformers warns about them.
//     Only the pooler may be missing (a checkpoint saved without pooling layer): has_pooler is then
//     false; any other missing weight, or a weight of the wrong shape, is an error naming the file,
//     the tensor and both shapes.
//   - sentence-transformers files, when present: the pooling mode (1_Pooling/config.json),
//     whether embeddings are normalized (a Normalize module in modules.json) and the maximum
//     sequence length (sentence_bert_config.json).
// Writing (SaveBertCheckpoint): config.json + model.safetensors (float tensors as they are), each
// written atomically; tokenizer files copied from a source folder; optionally the
// sentence-transformers files that name the pooling. Thread-safety: thread-compatible.
#ifndef TUNEFLEET_TRAINER_CHECKPOINT_H_
#define TUNEFLEET_TRAINER_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

// transformers' BertConfig, the fields a BERT encoder needs.
struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";  // gelu (erf), gelu_new / gelu_pytorch_tanh, relu, silu
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t pad_token_id = 0;
  // The config.json this came from ("" when made in code): keys this struct does not model are
  // written back unchanged.
  std::string source_json;
};

// Parses config.json text; `path` names the file in errors.
absl::StatusOr<BertConfig> ParseBertConfig(absl::string_view json, absl::string_view path);
absl::StatusOr<BertConfig> ReadBertConfig(const std::string& path);
// config.json text as transformers writes it (sorted keys, indent 2), with "architectures":
// ["BertModel"] and "model_type": "bert"; `dtype` ("float32") updates dtype/torch_dtype if present.
std::string BertConfigToJson(const BertConfig& config, const std::string& dtype = "float32");

// BertModel's state_dict names and shapes, in transformers' order.
std::vector<std::pair<std::string, std::vector<int64_t>>> BertParameterShapes(
    const BertConfig& config, bool with_pooler = true);

struct BertCheckpoint {
  BertConfig config;
  std::map<std::string, torch::Tensor> tensors;  // BertModel names, float32, CPU
  std::vector<std::string> unexpected_keys;      // file names not used, sorted
  std::vector<std::string> missing_keys;         // BertModel names not in the file, sorted
  bool has_pooler = true;
  std::vector<std::string> weight_files;  // the files read
  // sentence-transformers: "mean", "cls", "max", another mode's name as written
  // ("mean_sqrt_len_tokens"), or "" when the folder has no Pooling module.
  std::string pooling;
  bool normalize = false;  // a Normalize module follows the pooling
  int64_t max_seq_length = 0;  // sentence_bert_config.json's, or 0
};

absl::StatusOr<BertCheckpoint> LoadBertCheckpoint(const std::string& dir);

struct CheckpointSaveOptions {
  // Copy vocab.txt, tokenizer.json, tokenizer_config.json, special_tokens_map.json,
  // added_tokens.json from here when present; also the sentence-transformers files when
  // `pooling` is empty.
  std::string source_dir;
  // When set ("mean", "cls", "max"), write modules.json, sentence_bert_config.json and
  // 1_Pooling/config.json so that sentence-transformers uses this pooling.
  std::string pooling;
  int64_t max_seq_length = 128;
};

// Creates `dir` (and parents) if needed and writes the checkpoint; `tensors` use BertModel
// names and may live on any device.
absl::Status SaveBertCheckpoint(const std::string& dir, const BertConfig& config,
                                const std::map<std::string, torch::Tensor>& tensors,
                                const CheckpointSaveOptions& options = {});

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_CHECKPOINT_H_
