#include "trainer/data/precompiled_normalizer.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/utext.h>

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "trainer/data/utf8_check.h"

namespace tunefleet {
namespace trainer {
namespace {

// darts-clone's unit layout.
bool HasLeaf(uint32_t unit) { return ((unit >> 8) & 1) != 0; }
uint32_t Value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t Label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
uint32_t Offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

// One break iterator per thread: ICU's iterators are not thread-safe, and building one costs.
icu::BreakIterator* GraphemeIterator() {
  thread_local std::unique_ptr<icu::BreakIterator> iterator;
  if (iterator == nullptr) {
    UErrorCode status = U_ZERO_ERROR;
    iterator.reset(icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status)) iterator.reset();
  }
  return iterator.get();
}

}  // namespace

absl::StatusOr<PrecompiledNormalizer> PrecompiledNormalizer::FromBlob(absl::string_view blob,
                                                                      const std::string& source) {
  PrecompiledNormalizer normalizer;
  if (blob.empty()) return normalizer;
  uint32_t trie_size = 0;
  if (blob.size() <= sizeof(trie_size)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": precompiled charsmap too short"));
  }
  const auto* b = reinterpret_cast<const unsigned char*>(blob.data());
  trie_size = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  if (trie_size % 4 != 0 || trie_size == 0 || trie_size > blob.size() - sizeof(trie_size)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": precompiled charsmap's trie size ",
                                                   trie_size, " does not fit its ", blob.size(),
                                                   " bytes"));
  }
  normalizer.units_.resize(trie_size / 4);
  for (size_t i = 0; i < normalizer.units_.size(); ++i) {
    const unsigned char* u = b + 4 + 4 * i;
    normalizer.units_[i] = u[0] | (u[1] << 8) | (u[2] << 16) | (static_cast<uint32_t>(u[3]) << 24);
  }
  normalizer.replacements_ = std::string(blob.substr(4 + trie_size));
  if (!IsValidUtf8(normalizer.replacements_)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": precompiled charsmap's replacements are not UTF-8"));
  }
  return normalizer;
}

std::optional<absl::string_view> PrecompiledNormalizer::Transform(absl::string_view chunk) const {
  const size_t size = units_.size();
  if (size == 0) return std::nullopt;
  size_t node = Offset(units_[0]);
  for (const char ch : chunk) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) break;
    node ^= c;
    if (node >= size) return std::nullopt;
    const uint32_t unit = units_[node];
    if (Label(unit) != c) return std::nullopt;
    node ^= Offset(unit);
    if (HasLeaf(unit)) {
      if (node >= size) return std::nullopt;
      const size_t begin = Value(units_[node]);
      if (begin >= replacements_.size()) return absl::string_view();
      const size_t end = replacements_.find('\0', begin);
      return absl::string_view(replacements_)
          .substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    }
  }
  return std::nullopt;
}

void PrecompiledNormalizer::AppendCluster(absl::string_view cluster, std::string* out) const {
  if (cluster.size() < 6) {
    if (const auto norm = Transform(cluster)) {
      out->append(norm->data(), norm->size());
      return;
    }
  }
  for (size_t i = 0; i < cluster.size();) {
    const size_t n = std::min(Utf8SequenceLength(cluster[i]), cluster.size() - i);
    const absl::string_view c = cluster.substr(i, n);
    const auto norm = Transform(c);
    const absl::string_view piece = norm ? *norm : c;
    out->append(piece.data(), piece.size());
    i += n;
  }
}

std::string PrecompiledNormalizer::Normalize(absl::string_view text) const {
  if (identity()) return std::string(text);
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  bool ascii = true;
  for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {  // every ASCII character is its own cluster, except CR LF
    for (size_t i = 0; i < text.size();) {
      const size_t n = text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
      AppendCluster(text.substr(i, n), &out);
      i += n;
    }
    return out;
  }
  icu::BreakIterator* iterator = GraphemeIterator();
  UErrorCode status = U_ZERO_ERROR;
  UText utext = UTEXT_INITIALIZER;
  utext_openUTF8(&utext, text.data(), static_cast<int64_t>(text.size()), &status);
  if (iterator != nullptr && U_SUCCESS(status)) iterator->setText(&utext, status);
  if (iterator == nullptr || U_FAILURE(status)) {  // no ICU data: character by character
    utext_close(&utext);
    for (size_t i = 0; i < text.size();) {
      const size_t n = std::min(Utf8SequenceLength(text[i]), text.size() - i);
      AppendCluster(text.substr(i, n), &out);
      i += n;
    }
    return out;
  }
  // On a UTF-8 UText, the iterator's indices are byte offsets.
  int32_t start = iterator->first();
  for (int32_t end = iterator->next(); end != icu::BreakIterator::DONE;
       start = end, end = iterator->next()) {
    AppendCluster(text.substr(start, end - start), &out);
  }
  utext_close(&utext);
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
