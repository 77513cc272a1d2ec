// The sentence-transformers files of a model folder: modules.json (the module list: Transformer,
// Pooling, maybe Normalize), sentence_bert_config.json (max_seq_length), the Pooling module's
// config.json (1_Pooling/config.json: which pooling mode is on, include_prompt) and
// config_sentence_transformers.json (prompts, default_prompt_name).
// Errors are one line naming the file (and the key).
// Thread-safety: stateless (the file system is shared).
#ifndef TUNEFLEET_TRAINER_MODEL_ST_MODULES_H_
#define TUNEFLEET_TRAINER_MODEL_ST_MODULES_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace trainer {

struct StModules {
  // "mean", "cls", "max", another mode's name as written ("mean_sqrt_len_tokens"), or "" when
  // the folder has no Pooling module.
  std::string pooling;
  bool normalize = false;      // a Normalize module follows the pooling
  int64_t max_seq_length = 0;  // sentence_bert_config.json's, or 0
  bool include_prompt = true;  // the Pooling config's: false leaves the prompt out of pooling
};

// What a trained model says of prompts: SentenceTransformer's `prompts` (name -> prompt) and
// `default_prompt_name` (the one encode applies when given none; empty: none), and Pooling's
// include_prompt.
struct StPrompts {
  std::map<std::string, std::string> prompts;
  std::string default_prompt_name;
  bool include_prompt = true;
};

// The modules of the folder `dir`; all empty when it has no modules.json. Exactly one pooling
// mode must be on in a Pooling module's config.
absl::StatusOr<StModules> ReadStModules(const std::string& dir);

// Writes modules.json (Transformer, then Pooling in 1_Pooling), sentence_bert_config.json and
// 1_Pooling/config.json into `dir`, so that sentence-transformers uses `pooling` ("mean",
// "cls" or "max"; anything else is an error) over embeddings of `hidden_size`, with
// prompts.include_prompt; and, when prompts.prompts is not empty, config_sentence_transformers.json
// with them and default_prompt_name (null when empty), which SentenceTransformer reads back.
absl::Status WriteStModules(const std::string& dir, const std::string& pooling, int64_t hidden_size,
                            int64_t max_seq_length, const StPrompts& prompts = {});

// Copies the sentence-transformers files of `src` into `dir` (when `src` has modules.json):
// modules.json, sentence_bert_config.json, config_sentence_transformers.json, and each
// module's config.json (module paths with ".." or absolute ones are skipped).
absl::Status CopyStModules(const std::string& src, const std::string& dir);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_ST_MODULES_H_
