// What every tokenizer of a model folder shares (trainer/data/tokenizer_folder.h picks one):
// the added tokens matched literally in the raw text, the special tokens put around a text or a
// pair, truncation, and padding a batch. A tokenizer model (WordPiece: trainer/data/
// wordpiece_tokenizer.h; SentencePiece unigram: trainer/data/unigram_tokenizer.h) only turns a
// piece of text without added tokens into ids (TokenizeSegment).
//
// As Hugging Face tokenizers runs a tokenizer.json:
//   1. Added tokens (the special tokens) are found in the raw text, leftmost first and the
//      longest at one position, case-sensitively; one with lstrip (rstrip) also takes the
//      whitespace before (after) it. The text between them goes through TokenizeSegment.
//   2. Truncation counts the special tokens the template adds. A single text keeps its first
//      max_len - (specials) tokens. A pair follows HF's "longest_first": with budget L and
//      lengths s <= l of the shorter and the longer part, nothing is cut when s + l <= L; else
//      the shorter keeps s and the longer L - s when s <= L - s; else the shorter keeps L / 2
//      and the longer L - L / 2 (on equal lengths the second part counts as the longer one).
//   3. The post-processor's template: prefix A suffix, or prefix A middle B suffix; token type 0
//      up to the middle, then SpecialTemplate::second_type_id.
// Thread-safety: a loaded tokenizer is immutable; all const methods may run concurrently.
#ifndef TUNEFLEET_TRAINER_DATA_TOKENIZER_H_
#define TUNEFLEET_TRAINER_DATA_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

// One tokenized text or pair: ids with the special tokens, and their segment (0 or 1).
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> token_type_ids;
};

// A token matched literally in the raw text before the model sees it (HF's AddedToken).
struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool lstrip = false;  // also takes the whitespace before it
  bool rstrip = false;  // and the whitespace after it
};

// The special tokens around a text or a pair (HF's post-processor).
struct SpecialTemplate {
  std::vector<int32_t> single_prefix, single_suffix;
  std::vector<int32_t> pair_prefix, pair_middle, pair_suffix;
  int32_t second_type_id = 1;  // token type of B and pair_suffix

  // BERT's: [CLS] A [SEP], [CLS] A [SEP] B [SEP] with B's types 1.
  static SpecialTemplate Bert(int32_t cls, int32_t sep);
  // RoBERTa's (XLM-R, MPNet): <s> A </s>, <s> A </s> </s> B </s>, all types 0.
  static SpecialTemplate Roberta(int32_t cls, int32_t sep);
  size_t single_count() const { return single_prefix.size() + single_suffix.size(); }
  size_t pair_count() const { return pair_prefix.size() + pair_middle.size() + pair_suffix.size(); }
};

class Tokenizer {
 public:
  static constexpr int64_t kDefaultMaxLen = 128;

  virtual ~Tokenizer() = default;

  // Step 1: the ids of `text`, without special tokens added or truncation.
  std::vector<int32_t> Tokenize(absl::string_view text) const;
  // prefix text suffix, truncated to max_len tokens (0: no truncation; a max_len below the
  // template's specials acts as their count).
  Encoding Encode(absl::string_view text, int64_t max_len = kDefaultMaxLen) const;
  // prefix a middle b suffix, truncated longest-first to max_len (0: none).
  Encoding EncodePair(absl::string_view a, absl::string_view b,
                      int64_t max_len = kDefaultMaxLen) const;

  // The id of `token` in the vocabulary, or -1.
  virtual int32_t TokenId(const std::string& token) const = 0;
  // Ids are in [0, vocab_size()).
  virtual int64_t vocab_size() const = 0;
  // The model's name for messages: "WordPiece", "Unigram".
  virtual const char* kind() const = 0;

  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  const SpecialTemplate& special_template() const { return template_; }
  const std::vector<AddedToken>& added_tokens() const { return added_; }

  // Set while loading (trainer/data/tokenizer_folder.h), before the tokenizer is shared.
  void set_special_template(SpecialTemplate t) { template_ = std::move(t); }
  void set_added_tokens(std::vector<AddedToken> tokens);
  void set_pad_id(int32_t id) { pad_id_ = id; }

 protected:
  // Appends the ids of `text`, which holds no added token.
  virtual void TokenizeSegment(absl::string_view text, std::vector<int32_t>* out) const = 0;

  int32_t pad_id_ = -1;
  int32_t unk_id_ = -1;
  SpecialTemplate template_;

 private:
  std::vector<AddedToken> added_;
  std::string added_first_bytes_;  // where an added token may start: Tokenize skips to these
};

// prefix first middle second suffix of `t`, the two token lists (Tokenize's) truncated
// longest-first to max_len (0: none): EncodePair on ids already tokenized.
Encoding JoinPair(std::vector<int32_t> first, std::vector<int32_t> second, const SpecialTemplate& t,
                  int64_t max_len);

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

#endif  // TUNEFLEET_TRAINER_DATA_TOKENIZER_H_
