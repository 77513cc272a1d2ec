// task.prompts (trainer/config/config_schema.h, TaskConfig::prompt and prompts): one prompt for
// every text column (a string), or a mapping column -> prompt, checked against what the config
// says of the data. Errors name the file, the line and the key (ConfigMap::Error), e.g.
//   train.yaml:2: task.prompts: column "foo" is not a text column (anchor, positive, negative)
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_CONFIG_PROMPTS_KEY_H_
#define TUNEFLEET_TRAINER_CONFIG_PROMPTS_KEY_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/yaml_config.h"

namespace tunefleet {
namespace trainer {

// Reads `key` of `m`: a string into *all, or a mapping column -> prompt into *by_column (a
// column given an empty prompt gets none, as sentence-transformers skips it).
absl::Status ReadPromptsKey(const ConfigMap& m, const std::string& key, std::string* all,
                            std::map<std::string, std::string>* by_column);

// Prompts (`all` or `by_column`) only apply to a bi_encoder (`model_kind`), and by column only to
// the text columns the config names: `columns` (task.columns) or, for a fixed `format` (not
// jsonl, csv or tsv), sentence1 and sentence2 (as trainer/data/prompts.h names them). A data
// file's own columns are checked when it is read.
absl::Status CheckPromptsKey(const ConfigMap& m, const std::string& key,
                             const std::string& model_kind, const std::string& format,
                             const std::vector<std::string>& columns, const std::string& all,
                             const std::map<std::string, std::string>& by_column);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_CONFIG_PROMPTS_KEY_H_
