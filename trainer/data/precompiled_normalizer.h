// SentencePiece's precompiled character map (NormalizerSpec.precompiled_charsmap, the
// "Precompiled" normalizer of a tokenizer.json) applied exactly as Hugging Face tokenizers
// (crate spm_precompiled) applies it, which differs from sentencepiece's own normalizer:
//
//   The text is walked by extended grapheme clusters (ICU's character break iterator). A
//   cluster shorter than 6 bytes is looked up whole: when the map has a key that is a prefix of
//   it, the FIRST (shortest) such key's replacement stands for the whole cluster. Otherwise each
//   of its characters is looked up alone and replaced, or copied when the map lacks it.
//
// The blob: a uint32 little-endian byte size N of the trie, N bytes of a darts-clone double
// array (uint32 units), then the replacement strings, each NUL-terminated; a key's value is the
// offset of its replacement. A NUL byte in the text ends a lookup (as in spm_precompiled).
// Text must be well-formed UTF-8 (trainer/data/utf8_check.h repairs it first).
// Thread-safety: immutable once built; Normalize may run concurrently.
#ifndef TUNEFLEET_TRAINER_DATA_PRECOMPILED_NORMALIZER_H_
#define TUNEFLEET_TRAINER_DATA_PRECOMPILED_NORMALIZER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

class PrecompiledNormalizer {
 public:
  // The identity.
  PrecompiledNormalizer() = default;

  // Parses a charsmap blob; an empty blob is the identity. Errors name `source` (the file and
  // key the blob came from): a blob shorter than its stated trie, a trie size not a multiple of
  // 4, replacements that are not UTF-8.
  static absl::StatusOr<PrecompiledNormalizer> FromBlob(absl::string_view blob,
                                                        const std::string& source);

  bool identity() const { return units_.empty(); }
  std::string Normalize(absl::string_view text) const;

  // The replacement of the shortest key that is a prefix of `chunk`, if any.
  std::optional<absl::string_view> Transform(absl::string_view chunk) const;

 private:
  void AppendCluster(absl::string_view cluster, std::string* out) const;

  std::vector<uint32_t> units_;
  std::string replacements_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_PRECOMPILED_NORMALIZER_H_
