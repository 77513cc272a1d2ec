// XLM-R's SentencePiece unigram tokenizer, identical in output to Hugging Face tokenizers running
// XLM-R's tokenizer.json (data/golden/families/xlm-r; transformers' XLMRobertaConverter builds
// the same from sentencepiece.bpe.model). Written here because Debian's libsentencepiece carries
// its own protobuf 3.14 and aborts in a process that also links Debian's libprotobuf.
//
// TokenizeSegment, on a text without added tokens:
//  1. Ill-formed UTF-8 reads as U+FFFD (trainer/data/utf8_check.h).
//  2. Precompiled normalizer: the model's charsmap (nmt_nfkc for XLM-R), as HF applies it
//     (trainer/data/precompiled_normalizer.h).
//  3. WhitespaceSplit: split on Unicode White_Space, which is dropped.
//  4. Metaspace: each word gets "▁" (U+2581) prepended unless it starts with one, then is split
//     before every "▁" (a "▁" in the text starts a new piece too).
//  5. Unigram on each piece: the best-scoring segmentation over every vocabulary entry (as HF,
//     which knows no piece types: <s>, </s>, <mask> score 0 and can match text that
//     normalizes to them); a character no single-character entry covers scores
//     min_score - 10 as the unknown token; on equal scores the path found first (the earlier
//     start) wins; consecutive unknowns fuse into one unknown token.
// Ids come from the vocabulary's positions; a piece listed twice takes its last position (HF's
// hash map). Special tokens, truncation and padding are the base's (trainer/data/tokenizer.h).
// Thread-safety: a loaded tokenizer is immutable; all const methods may run concurrently.
#ifndef TUNEFLEET_TRAINER_DATA_UNIGRAM_TOKENIZER_H_
#define TUNEFLEET_TRAINER_DATA_UNIGRAM_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json_fwd.hpp"
#include "trainer/data/precompiled_normalizer.h"
#include "trainer/data/tokenizer.h"

namespace tunefleet {
namespace trainer {

class UnigramTokenizer : public Tokenizer {
 public:
  static constexpr double kUnknownPenalty = 10.0;

  // A sentencepiece `.model` (ModelProto) with fairseq's ids, as XLMRobertaConverter maps them:
  // <s>=0 <pad>=1 </s>=2 <unk>=3, spm piece i >= 3 at i + 1, <mask> last (spm size + 1), the
  // specials scoring 0. Pad 1, unk 3, template <s> A </s> (</s> B </s>), added tokens <s> <pad>
  // </s> <unk> <mask>. Errors name the file: missing, not a ModelProto, not a unigram model,
  // byte_fallback, pieces 0-2 not <unk> <s> </s>, a bad charsmap.
  static absl::StatusOr<UnigramTokenizer> FromSentencePieceModel(const std::string& path);

  // tokenizer.json's "model" ({"type": "Unigram", "unk_id", "vocab": [[piece, score], ...],
  // "byte_fallback": false}) and "normalizer" (null, "Precompiled", or a "Sequence" of
  // Precompiled and Replace(" {2,}" -> " "), which WhitespaceSplit makes a no-op). Pad is the id
  // of "<pad>" when the vocab has it; template and added tokens are the caller's to set. Errors
  // are one line naming `path` and the key.
  static absl::StatusOr<UnigramTokenizer> FromTokenizerJson(const nlohmann::json& model,
                                                            const nlohmann::json& normalizer,
                                                            const std::string& path);

  int32_t TokenId(const std::string& token) const override;
  int64_t vocab_size() const override { return static_cast<int64_t>(scores_.size()); }
  const char* kind() const override { return "Unigram"; }

  // Steps 1-4: the pieces the unigram model sees (for tests and diagnostics).
  std::vector<std::string> PreTokenize(absl::string_view text) const;

 protected:
  void TokenizeSegment(absl::string_view text, std::vector<int32_t>* out) const override;

 private:
  UnigramTokenizer() = default;
  // Builds the lookup structures from (piece, score) in id order.
  absl::Status SetVocab(const std::vector<std::pair<std::string, double>>& vocab, int32_t unk_id,
                        const std::string& source);
  // Step 5 on one piece.
  void TokenizePiece(absl::string_view piece, std::vector<int32_t>* out) const;
  // The trie node after `byte` from `node` (0 is the root), or -1.
  int32_t Child(int32_t node, unsigned char byte) const;

  std::vector<double> scores_;                     // by id
  absl::flat_hash_map<std::string, int32_t> ids_;  // piece -> its last id
  absl::flat_hash_map<uint64_t, int32_t> edges_;   // (node << 8 | byte) -> node
  std::vector<int32_t> node_ids_;                  // trie node -> id ending there, or -1
  double min_score_ = 0.0;
  bool prepend_ = true;
  PrecompiledNormalizer normalizer_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_UNIGRAM_TOKENIZER_H_
