// BERT's WordPiece tokenizer, identical in output to Hugging Face tokenizers'
// BertWordPieceTokenizer(vocab, lowercase=True) (data/bert-tiny-random/tokenizer.json), and with
// Options{.lowercase = false} to transformers' BertTokenizerFast(do_lower_case=False), the cased
// and multilingual models' (bert-base-cased, multilingual BERT, klue/bert-base):
//
//  1. Special tokens ([PAD] [UNK] [CLS] [SEP] [MASK], those the vocab has) written literally in
//     the raw text are kept as themselves (case-sensitive, as HF's added-token matcher does);
//     the text between them goes through steps 2-4.
//  2. BertNormalizer: drop U+0000, U+FFFD and "other" characters (Cc, Cf, Cn, Co, Cs) except
//     \t \n \r; every White_Space character becomes ' '; put spaces around CJK ideographs
//     (4E00-9FFF, 3400-4DBF, 20000-2A6DF, 2A700-2B73F, 2B740-2B81F, 2B920-2CEAF, F900-FAFF,
//     2F800-2FA1F: HF's ranges, whose fifth starts at 2B920 where Google's BERT has 2B820);
//     strip accents (NFD, then drop Mn; by default only when lowercasing, as HF's
//     strip_accents=None); lowercase each character with its full Unicode mapping (no context: a
//     final capital sigma becomes σ, not ς). Cased, nothing is decomposed: "é" stays one
//     character, and "e" + U+0301 stays two (the mark joins its word).
//  3. BertPreTokenizer: split on whitespace, then isolate every punctuation character (Unicode
//     P* categories and ASCII 33-47, 58-64, 91-96, 123-126).
//  4. WordPiece: greedy longest-match-first with the "##" continuation prefix; a word longer than
//     100 characters, or one with an unmatchable piece, becomes [UNK] as a whole.
//  5. BertProcessing: [CLS] A [SEP], or [CLS] A [SEP] B [SEP] with token_type_ids 0 for
//     [CLS] A [SEP] and 1 for B [SEP].
// Truncation to max_len counts the special tokens. A single text keeps its first
// max_len - 2 tokens. A pair follows HF's "longest_first": with budget L = max_len - 3 and
// lengths s <= l of the shorter and the longer part, nothing is cut when s + l <= L; else the
// shorter keeps s and the longer L - s when s <= L - s; else the shorter keeps L / 2 and the
// longer L - L / 2 (on equal lengths the second part counts as the longer one).
//
// Unicode data comes from ICU. HF's Rust crates carry their own (older) tables, so characters
// assigned in recent Unicode versions may differ; each ill-formed UTF-8 sequence (a maximal
// subpart, trainer/data/utf8_check.h) reads as U+FFFD and is dropped.
// Thread-safety: a loaded tokenizer is immutable; all const methods may run concurrently.
#ifndef TUNEFLEET_TRAINER_DATA_WORDPIECE_TOKENIZER_H_
#define TUNEFLEET_TRAINER_DATA_WORDPIECE_TOKENIZER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

// One tokenized text or pair: ids with [CLS]/[SEP], and their segment (0 or 1).
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> token_type_ids;
};

// BertNormalizer's settings, as a model's tokenizer_config.json names them.
struct WordPieceOptions {
  bool lowercase = true;              // do_lower_case
  std::optional<bool> strip_accents;  // strip_accents; unset: as `lowercase`
  bool split_chinese = true;          // tokenize_chinese_chars
  bool StripsAccents() const { return strip_accents.value_or(lowercase); }
};

class WordPieceTokenizer {
 public:
  static constexpr int64_t kDefaultMaxLen = 128;
  static constexpr int kMaxInputCharsPerWord = 100;

  using Options = WordPieceOptions;

  // Loads a vocab.txt (one token a line, line index = id; trailing whitespace is trimmed and a
  // repeated token takes its last id, as HF reads it). Errors name the file: missing or
  // unreadable, empty, not UTF-8, lacking [CLS], [SEP], [UNK] or [PAD]. The special tokens' ids
  // are the vocab's (a cased vocab has them anywhere, not at 0 / 100-103).
  static absl::StatusOr<WordPieceTokenizer> FromVocabFile(const std::string& path,
                                                          const Options& options = {});
  // The same from tokens already in memory; `source` names them in errors.
  static absl::StatusOr<WordPieceTokenizer> FromTokens(const std::vector<std::string>& tokens,
                                                       const std::string& source,
                                                       const Options& options = {});
  // A model folder's tokenizer: DIR/vocab.txt, with the settings of DIR/tokenizer_config.json
  // (do_lower_case, strip_accents, tokenize_chinese_chars, as transformers reads them), else of
  // DIR/tokenizer.json's BertNormalizer, else uncased. A malformed file is an error naming it.
  static absl::StatusOr<WordPieceTokenizer> FromModelFolder(const std::string& dir);
  // The settings FromModelFolder reads from DIR.
  static absl::StatusOr<Options> ModelOptions(const std::string& dir);

  // Steps 1-4: the ids of `text`, without special tokens added or truncation.
  std::vector<int32_t> Tokenize(absl::string_view text) const;
  // [CLS] text [SEP], truncated to max_len tokens (0: no truncation; values below 2 act as 2).
  Encoding Encode(absl::string_view text, int64_t max_len = kDefaultMaxLen) const;
  // [CLS] a [SEP] b [SEP], truncated longest-first to max_len (0: none; below 3 acts as 3).
  Encoding EncodePair(absl::string_view a, absl::string_view b,
                      int64_t max_len = kDefaultMaxLen) const;

  // Step 2 alone, as UTF-8 (for tests and debugging).
  static std::string Normalize(absl::string_view text, const Options& options = {});
  const Options& options() const { return options_; }

  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  // Number of lines of the vocab (ids are in [0, vocab_size)).
  int64_t vocab_size() const { return vocab_size_; }
  // The id of `token`, or -1.
  int32_t TokenId(const std::string& token) const;

 private:
  WordPieceTokenizer() = default;
  // Step 4 on one pre-tokenized word (UTF-8), appending ids to `out`.
  void WordPiece(const std::string& word, int64_t chars, std::vector<int32_t>* out) const;
  // Steps 2-4 on text containing no special token.
  void TokenizePlain(absl::string_view text, std::vector<int32_t>* out) const;

  Options options_;
  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::pair<std::string, int32_t>> specials_;  // matched literally in raw text
  int64_t vocab_size_ = 0;
  int32_t pad_id_ = -1;
  int32_t unk_id_ = -1;
  int32_t cls_id_ = -1;
  int32_t sep_id_ = -1;
};

// A batch padded to its longest encoding (dynamic padding), row-major [rows x cols], int64 as
// the model takes them: attention_mask is 1 on real tokens and 0 on padding; padding uses
// pad_id and token type 0.
struct PaddedBatch {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> input_ids;
  std::vector<int64_t> token_type_ids;
  std::vector<int64_t> attention_mask;
};
// `multiple` > 1 rounds the length up to a multiple of it (transformers' pad_to_multiple_of:
// on GPUs, 8 keeps tensor-core shapes aligned and the number of distinct shapes small);
// `min_cols` pads to at least that many columns (the length other ranks pad the same step to,
// trainer/data/batch_plan.h).
PaddedBatch PadBatch(const std::vector<Encoding>& batch, int32_t pad_id = 0, int64_t multiple = 1,
                     int64_t min_cols = 0);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_WORDPIECE_TOKENIZER_H_
