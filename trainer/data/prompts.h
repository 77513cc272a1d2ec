// Prompts prepended to a dataset's texts, as sentence-transformers' trainer applies its `prompts`
// argument (SentenceTransformerDataCollator: `prompt + text` before tokenization), and the prompt
// length that Pooling(include_prompt=False) leaves out of the pooling (the collator's
// _get_prompt_length).
//
// A prompt is either one string for every text column, or a map from text column name to prompt
// (a column without an entry gets none). A dataset's text columns, in order (Example::a, b, then
// the negatives): task.columns when given; for the fixed formats (stsb, sick, paws, mrpc)
// "sentence1" and "sentence2"; else the file's own, as trainer/data/column_reader.h picks them
// (jsonl: the keys of the first object; csv, tsv: the header line; the label columns left out).
// Thread-safety: free functions without shared state.
#ifndef TUNEFLEET_TRAINER_DATA_PROMPTS_H_
#define TUNEFLEET_TRAINER_DATA_PROMPTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/data/column_reader.h"
#include "trainer/data/example.h"
#include "trainer/data/tokenizer.h"

namespace tunefleet {
namespace trainer {

struct Prompts {
  std::string all;                               // for every text column; empty: by column
  std::map<std::string, std::string> by_column;  // column name -> prompt
  bool empty() const { return all.empty() && by_column.empty(); }
};

// The text column names of the dataset `path` in `format` read with `options` (see above).
// Errors: the file cannot be read, or its first row or header is not what its format says
// ("PATH: ..."); the readers report anything else.
absl::StatusOr<std::vector<std::string>> TextColumnNames(const std::string& path,
                                                         const std::string& format,
                                                         const ColumnOptions& options);

// The prompt of each of `columns`, in order ("" for none).
std::vector<std::string> ColumnPrompts(const Prompts& prompts,
                                       const std::vector<std::string>& columns);

// OK when every name of prompts.by_column is one of `columns`, the text columns of the data file
// `path`; else InvalidArgument "CONFIG: task.prompts: column \"foo\" is not a text column of
// PATH (anchor, positive)", `config` naming the trainer YAML.
absl::Status CheckPromptColumns(const Prompts& prompts, const std::vector<std::string>& columns,
                                const std::string& config, const std::string& path);

// Prepends column_prompts[i] to the i-th text (a, b, then each negative) of every example; texts
// beyond column_prompts keep theirs.
void ApplyPrompts(const std::vector<std::string>& column_prompts, std::vector<Example>* examples);

// How many tokens of a text that starts with `prompt` pooling leaves out when the model's
// include_prompt is false: the tokens of `prompt` encoded alone (with the special tokens the
// tokenizer adds, truncated to max_len), less one when the last is a special token (a template
// token, padding or unknown, or an added token), so [CLS] and the prompt's tokens. 0 for "".
int64_t PromptLength(const Tokenizer& tokenizer, const std::string& prompt, int64_t max_len);

// PromptLength of each prompt, in order.
std::vector<int64_t> PromptLengths(const Tokenizer& tokenizer,
                                   const std::vector<std::string>& prompts, int64_t max_len);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_PROMPTS_H_
