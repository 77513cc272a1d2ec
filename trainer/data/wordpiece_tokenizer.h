// BERT's WordPiece model (MPNet's and klue/roberta's too), identical in output to Hugging Face
// tokenizers' BertWordPieceTokenizer(vocab, lowercase=True) (data/bert-tiny-random/tokenizer.json),
// and with Options{.lowercase = false} to transformers' BertTokenizerFast(do_lower_case=False), the
// cased and multilingual models' (bert-base-cased, multilingual BERT, klue/bert-base):
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
//  5. The special tokens around a text or a pair, and truncation: trainer/data/tokenizer.h (by
//     default BERT's template: [CLS] A [SEP], [CLS] A [SEP] B [SEP] with B's types 1).
// Steps 1 and 5 are the base class's (trainer/data/tokenizer.h); the special tokens' names are
// Options' (MPNet's WordPiece has <s> </s> <pad> <unk> <mask>).
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
#include "nlohmann/json.hpp"
#include "trainer/data/tokenizer.h"

namespace tunefleet {
namespace trainer {

// BertNormalizer's settings, as a model's tokenizer_config.json names them.
struct WordPieceOptions {
  bool lowercase = true;              // do_lower_case
  std::optional<bool> strip_accents;  // strip_accents; unset: as `lowercase`
  bool split_chinese = true;          // tokenize_chinese_chars
  bool StripsAccents() const { return strip_accents.value_or(lowercase); }
  // The special tokens (tokenizer_config.json's cls_token, ...; MPNet's are <s> </s> <pad>
  // <unk> <mask>): the vocab must hold the first four; those it holds are matched literally in
  // the raw text.
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string unk_token = "[UNK]";
  std::string pad_token = "[PAD]";
  std::string mask_token = "[MASK]";
};

class WordPieceTokenizer : public Tokenizer {
 public:
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
  // FromModelFolder and ModelOptions on DIR's tokenizer.json and tokenizer_config.json already
  // read (each a JSON object, or null where the file is absent), as
  // trainer/data/tokenizer_folder.h has them: each file is parsed once.
  static absl::StatusOr<WordPieceTokenizer> FromModelFiles(const std::string& dir,
                                                           const nlohmann::json& fast,
                                                           const nlohmann::json& config);
  static absl::StatusOr<Options> OptionsFromFiles(const std::string& dir,
                                                  const nlohmann::json& fast,
                                                  const nlohmann::json& config);

  // Step 2 alone, as UTF-8 (for tests and debugging).
  static std::string Normalize(absl::string_view text, const Options& options = {});
  const Options& options() const { return options_; }

  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  // Number of lines of the vocab (ids are in [0, vocab_size)).
  int64_t vocab_size() const override { return vocab_size_; }
  // The id of `token`, or -1.
  int32_t TokenId(const std::string& token) const override;
  const char* kind() const override { return "WordPiece"; }

 protected:
  // Steps 2-4 on text containing no special token.
  void TokenizeSegment(absl::string_view text, std::vector<int32_t>* out) const override;

 private:
  WordPieceTokenizer() = default;
  // Step 4 on one pre-tokenized word (UTF-8), appending ids to `out`.
  void WordPiece(const std::string& word, int64_t chars, std::vector<int32_t>* out) const;

  Options options_;
  std::unordered_map<std::string, int32_t> vocab_;
  int64_t vocab_size_ = 0;
  int32_t cls_id_ = -1;
  int32_t sep_id_ = -1;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_WORDPIECE_TOKENIZER_H_
