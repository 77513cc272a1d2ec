// Hugging Face model folders: reading and writing config.json and the weights, in the layout
// that transformers' AutoModel.from_pretrained (BertModel for BERT) and sentence-transformers
// load. What depends on the model family (trainer/model/model_family.h) is the family's, found
// by config.json's model_type (trainer/model/model_family_registry.h): the config's keys, the
// encoder's parameters, the names in the files, the tokenizer files. BERT's are below.
//
// Reading (LoadBertCheckpoint):
//   - config.json: its family's parser (BERT: trainer/model/bert_config.h).
//   - weights: model.safetensors, else model.safetensors.index.json ("weight_map": tensor ->
//     shard file) and its shards. Each shard must hold exactly the tensors the index maps to it.
//   - names: mapped by the family (BERT: with or without the "bert." prefix, legacy
//     LayerNorm.gamma/beta read as weight/bias; trainer/model/bert_family.h). Tensors that are not
//     the encoder's weights (BERT's "cls.predictions.*", "cls.seq_relationship.*") are unexpected
//     keys; encoder weights absent from the file are missing keys; both are logged the way
//     transformers warns about them. Only the pooler may be missing (a checkpoint saved without
//     pooling layer): has_pooler is then false, as it is for a family whose class has no pooler
//     (DistilBERT); any other missing weight, or a weight of the wrong shape, is an error naming
//     the file, the tensor and both shapes.
//   - sentence-transformers files, when present (trainer/model/st_modules.h): the pooling mode
//     (1_Pooling/config.json), whether embeddings are normalized (a Normalize module in
//     modules.json) and the maximum sequence length (sentence_bert_config.json).
//   - a cross-encoder's head (a *ForSequenceClassification folder: its family's head tensors,
//     trainer/model/classifier_heads.h: "classifier.*", DistilBERT's also "pre_classifier.*")
//     is kept apart in `head`, not reported as unexpected; where the family's class has no
//     pooler (RoBERTa, XLM-R, MPNet), none is expected (has_pooler false).
// Writing (SaveBertCheckpoint): config.json + model.safetensors (float tensors as they are, under
// the names the config's family saves them), each written atomically; the family's tokenizer
// files copied from a source folder; optionally the sentence-transformers files that name the
// pooling. Thread-safety: thread-compatible.
#ifndef TUNEFLEET_TRAINER_MODEL_HF_MODEL_FOLDER_H_
#define TUNEFLEET_TRAINER_MODEL_HF_MODEL_FOLDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/st_modules.h"

namespace tunefleet {
namespace trainer {

// A model folder's encoder, of any family (the name is BERT's, the first family's).
struct BertCheckpoint {
  BertConfig config;  // the shared encoder's, made by the folder's model family
  std::map<std::string, torch::Tensor> tensors;  // module names, float32, CPU
  std::vector<std::string> unexpected_keys;      // file names not used, sorted
  std::vector<std::string> missing_keys;         // module names not in the file, sorted
  bool has_pooler = true;
  std::vector<std::string> weight_files;  // the files read
  // sentence-transformers: "mean", "cls", "max", another mode's name as written
  // ("mean_sqrt_len_tokens"), or "" when the folder has no Pooling module.
  std::string pooling;
  bool normalize = false;      // a Normalize module follows the pooling
  int64_t max_seq_length = 0;  // sentence_bert_config.json's, or 0
  bool include_prompt = true;  // the Pooling config's include_prompt
  // A cross-encoder's head (a *ForSequenceClassification folder): the family's head tensors, as
  // named in the file, float32, CPU; empty for an encoder folder.
  std::map<std::string, torch::Tensor> head;
};

absl::StatusOr<BertCheckpoint> LoadBertCheckpoint(const std::string& dir);

// Logs the unexpected and missing keys of a checkpoint read from `dir` as transformers warns
// about them (LoadBertCheckpoint does; trainer/model/checkpoint_cache.h repeats it on a hit).
void LogCheckpointKeyWarnings(const std::string& dir, const BertCheckpoint& checkpoint);

struct CheckpointSaveOptions {
  // Copy the family's tokenizer files (BERT: vocab.txt, tokenizer.json, tokenizer_config.json,
  // special_tokens_map.json, added_tokens.json) from here when present; also the
  // sentence-transformers files when `pooling` is empty.
  std::string source_dir;
  // When set ("mean", "cls", "max"), write modules.json, sentence_bert_config.json and
  // 1_Pooling/config.json so that sentence-transformers uses this pooling.
  std::string pooling;
  int64_t max_seq_length = 128;
  // With `pooling`: the prompts and include_prompt written with the modules (WriteStModules).
  StPrompts prompts;
  // A cross-encoder's head (ClassifierHeadImpl::StateDict's names, e.g. BERT's
  // "classifier.weight" [K, H], "classifier.bias" [K]): then the folder is the family's
  // *ForSequenceClassification layout (ModelFamily::classifier_architecture): the encoder's
  // tensors under its base_model_prefix (without pooler where the class has none), config.json
  // with that architecture and K labels (id2label, label2id), and the "sentence_transformers" key
  // that CrossEncoder reads (activation_fn: Sigmoid for one label, Identity otherwise); no
  // sentence-transformers module files. An InvalidArgument error for a family without one.
  std::map<std::string, torch::Tensor> head;
};

// Creates `dir` (and parents) if needed and writes the checkpoint; `tensors` use module names
// (config's family's ParameterShapes) and may live on any device.
absl::Status SaveBertCheckpoint(const std::string& dir, const BertConfig& config,
                                const std::map<std::string, torch::Tensor>& tensors,
                                const CheckpointSaveOptions& options = {});

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_HF_MODEL_FOLDER_H_
