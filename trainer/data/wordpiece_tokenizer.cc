#include "trainer/data/wordpiece_tokenizer.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace trainer {
namespace {

using CodePoints = std::vector<UChar32>;

// UTF-8 -> code points; an ill-formed sequence reads as U+FFFD.
CodePoints Decode(absl::string_view text) {
  CodePoints out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t n = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U8_NEXT(s, i, n, c);
    out.push_back(c < 0 ? 0xFFFD : c);
  }
  return out;
}

void AppendUtf8(UChar32 c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Rust's char::is_whitespace (the White_Space property), plus \t \n \r as HF spells it out.
bool IsWhitespace(UChar32 c) {
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return true;
  if (c < 0x80) return c == 0x0B || c == 0x0C;
  return u_isUWhiteSpace(c);
}

// unicode_categories' is_other: Cc, Cf, Cn, Co, Cs; \t \n \r count as whitespace instead.
bool IsControl(UChar32 c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  if (c >= 0x20 && c < 0x7F) return false;
  switch (u_charType(c)) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_UNASSIGNED:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
      return true;
    default:
      return false;
  }
}

bool IsChinese(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool IsPunctuation(UChar32 c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  return c >= 0x80 && u_ispunct(c);
}

// NFD, then drop nonspacing marks (Mn).
CodePoints StripAccents(const CodePoints& in) {
  bool ascii = std::all_of(in.begin(), in.end(), [](UChar32 c) { return c < 0x80; });
  if (ascii) return in;
  std::u16string utf16;
  utf16.reserve(in.size() + 8);
  for (UChar32 c : in) {
    if (U_IS_BMP(c)) {
      utf16.push_back(static_cast<char16_t>(c));
    } else {
      utf16.push_back(static_cast<char16_t>(U16_LEAD(c)));
      utf16.push_back(static_cast<char16_t>(U16_TRAIL(c)));
    }
  }
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* nfd = unorm2_getNFDInstance(&err);
  std::u16string out(utf16.size() * 3 + 16, u'\0');
  int32_t n = 0;
  if (U_SUCCESS(err)) {
    n = unorm2_normalize(nfd, reinterpret_cast<const UChar*>(utf16.data()),
                         static_cast<int32_t>(utf16.size()), reinterpret_cast<UChar*>(&out[0]),
                         static_cast<int32_t>(out.size()), &err);
    if (err == U_BUFFER_OVERFLOW_ERROR) {
      out.assign(n, u'\0');
      err = U_ZERO_ERROR;
      n = unorm2_normalize(nfd, reinterpret_cast<const UChar*>(utf16.data()),
                           static_cast<int32_t>(utf16.size()), reinterpret_cast<UChar*>(&out[0]),
                           static_cast<int32_t>(out.size()), &err);
    }
  }
  if (U_FAILURE(err)) {  // ICU's data is built in; this does not happen in practice
    out = utf16;
    n = static_cast<int32_t>(utf16.size());
  }
  CodePoints result;
  result.reserve(n);
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U16_NEXT(out.data(), i, n, c);
    if (u_charType(c) != U_NON_SPACING_MARK) result.push_back(c);
  }
  return result;
}

// Full lowercase mapping of one character, without context (Rust's char::to_lowercase).
void AppendLower(UChar32 c, CodePoints* out) {
  if (c < 0x80) {
    out->push_back(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    return;
  }
  UChar src[2];
  int32_t len = 0;
  U16_APPEND_UNSAFE(src, len, c);
  UChar dst[8];
  UErrorCode err = U_ZERO_ERROR;
  int32_t n = u_strToLower(dst, 8, src, len, "", &err);
  if (U_FAILURE(err) || n > 8) {
    out->push_back(u_tolower(c));
    return;
  }
  for (int32_t i = 0; i < n;) {
    UChar32 d;
    U16_NEXT(dst, i, n, d);
    out->push_back(d);
  }
}

CodePoints NormalizeCodePoints(absl::string_view text, const WordPieceTokenizer::Options& o) {
  CodePoints cleaned;
  cleaned.reserve(text.size() + 8);
  for (UChar32 c : Decode(text)) {
    if (c == 0 || c == 0xFFFD || IsControl(c)) continue;  // clean_text
    if (IsWhitespace(c)) {
      cleaned.push_back(' ');
    } else if (o.split_chinese && IsChinese(c)) {  // handle_chinese_chars
      cleaned.push_back(' ');
      cleaned.push_back(c);
      cleaned.push_back(' ');
    } else {
      cleaned.push_back(c);
    }
  }
  CodePoints stripped = o.StripsAccents() ? StripAccents(cleaned) : std::move(cleaned);
  if (!o.lowercase) return stripped;
  CodePoints lowered;
  lowered.reserve(stripped.size());
  for (UChar32 c : stripped) AppendLower(c, &lowered);
  return lowered;
}

bool IsValidUtf8(absl::string_view line) {
  const auto* s = reinterpret_cast<const uint8_t*>(line.data());
  const int32_t n = static_cast<int32_t>(line.size());
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U8_NEXT(s, i, n, c);
    if (c < 0) return false;
  }
  return true;
}

// Rust's str::trim_end: drops trailing White_Space characters.
std::string TrimEnd(const std::string& line) {
  CodePoints cps = Decode(line);
  while (!cps.empty() && IsWhitespace(cps.back())) cps.pop_back();
  std::string out;
  for (UChar32 c : cps) AppendUtf8(c, &out);
  return out;
}

}  // namespace

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::FromVocabFile(const std::string& path,
                                                                     const Options& options) {
  absl::StatusOr<std::string> read = ReadFile(path);
  if (!read.ok()) return read.status();
  const std::string& text = *read;
  // Lines as Rust's BufRead::lines gives them: split on \n, a final \r dropped, no empty line
  // after a final newline.
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!IsValidUtf8(line)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", tokens.size() + 1, ": vocab line is not valid UTF-8"));
    }
    tokens.push_back(std::move(line));
    start = end + 1;
  }
  return FromTokens(tokens, path, options);
}

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::FromTokens(
    const std::vector<std::string>& tokens, const std::string& source, const Options& options) {
  if (tokens.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": vocab is empty"));
  WordPieceTokenizer t;
  t.options_ = options;
  t.vocab_size_ = static_cast<int64_t>(tokens.size());
  t.vocab_.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    t.vocab_[TrimEnd(tokens[i])] = static_cast<int32_t>(i);  // a repeated token: last id wins
  }
  std::vector<std::string> missing;
  for (const char* name : {"[CLS]", "[SEP]", "[UNK]", "[PAD]"}) {
    if (t.TokenId(name) < 0) missing.push_back(name);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": vocab lacks the special token(s) ", absl::StrJoin(missing, ", "), " (",
        tokens.size(), " lines; is this a BERT WordPiece vocab.txt?)"));
  }
  t.pad_id_ = t.TokenId("[PAD]");
  t.unk_id_ = t.TokenId("[UNK]");
  t.cls_id_ = t.TokenId("[CLS]");
  t.sep_id_ = t.TokenId("[SEP]");
  for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    if (int32_t id = t.TokenId(name); id >= 0) t.specials_.emplace_back(name, id);
  }
  return t;
}

namespace {

// The settings in one JSON object: `lower`, `strip` and `chinese` name its keys. A key that is
// present but not a boolean (strip_accents: or null) is an error naming the file.
absl::Status ReadOptions(const nlohmann::json& j, const std::string& path, const char* lower,
                         const char* strip, const char* chinese,
                         WordPieceTokenizer::Options* options) {
  const auto flag = [&](const char* key, bool* out) -> absl::Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return absl::OkStatus();
    if (!it->is_boolean()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", key, " must be true or false, not ", it->dump()));
    }
    *out = it->get<bool>();
    return absl::OkStatus();
  };
  if (absl::Status s = flag(lower, &options->lowercase); !s.ok()) return s;
  bool strip_accents = false;
  if (auto it = j.find(strip); it != j.end() && !it->is_null()) {
    if (absl::Status s = flag(strip, &strip_accents); !s.ok()) return s;
    options->strip_accents = strip_accents;
  }
  return flag(chinese, &options->split_chinese);
}

// The JSON object in `path`, or null when the file is absent.
absl::StatusOr<nlohmann::json> ReadJsonObject(const std::string& path) {
  if (!PathExists(path)) return nlohmann::json();
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  }
  return j;
}

}  // namespace

absl::StatusOr<WordPieceTokenizer::Options> WordPieceTokenizer::ModelOptions(
    const std::string& dir) {
  Options options;
  // tokenizer.json first (a fast tokenizer's own normalizer), then tokenizer_config.json, whose
  // settings transformers applies over it.
  const std::string fast_path = JoinPath(dir, "tokenizer.json");
  absl::StatusOr<nlohmann::json> fast = ReadJsonObject(fast_path);
  if (!fast.ok()) return fast.status();
  if (fast->is_object()) {
    auto normalizer = fast->find("normalizer");
    if (normalizer != fast->end() && normalizer->is_object() &&
        normalizer->value("type", "") == "BertNormalizer") {
      absl::Status s = ReadOptions(*normalizer, fast_path + " (normalizer)", "lowercase",
                                   "strip_accents", "handle_chinese_chars", &options);
      if (!s.ok()) return s;
    }
  }
  const std::string config_path = JoinPath(dir, "tokenizer_config.json");
  absl::StatusOr<nlohmann::json> config = ReadJsonObject(config_path);
  if (!config.ok()) return config.status();
  if (config->is_object()) {
    absl::Status s = ReadOptions(*config, config_path, "do_lower_case", "strip_accents",
                                 "tokenize_chinese_chars", &options);
    if (!s.ok()) return s;
  }
  return options;
}

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::FromModelFolder(const std::string& dir) {
  absl::StatusOr<Options> options = ModelOptions(dir);
  if (!options.ok()) return options.status();
  return FromVocabFile(JoinPath(dir, "vocab.txt"), *options);
}

int32_t WordPieceTokenizer::TokenId(const std::string& token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

std::string WordPieceTokenizer::Normalize(absl::string_view text, const Options& options) {
  std::string out;
  for (UChar32 c : NormalizeCodePoints(text, options)) AppendUtf8(c, &out);
  return out;
}

void WordPieceTokenizer::WordPiece(const std::string& word, int64_t chars,
                                   std::vector<int32_t>* out) const {
  if (chars > kMaxInputCharsPerWord) {
    out->push_back(unk_id_);
    return;
  }
  // Byte offset where each character starts, plus the end.
  std::vector<size_t> starts;
  starts.reserve(chars + 1);
  for (size_t i = 0; i < word.size(); ++i) {
    if ((static_cast<uint8_t>(word[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  starts.push_back(word.size());
  const size_t n = starts.size() - 1;
  const size_t first = out->size();
  std::string piece;
  for (size_t start = 0; start < n;) {
    size_t end = n;
    int32_t id = -1;
    for (; end > start; --end) {
      piece.assign(start > 0 ? "##" : "");
      piece.append(word, starts[start], starts[end] - starts[start]);
      id = TokenId(piece);
      if (id >= 0) break;
    }
    if (id < 0) {  // no piece matches: the whole word is unknown
      out->resize(first);
      out->push_back(unk_id_);
      return;
    }
    out->push_back(id);
    start = end;
  }
}

void WordPieceTokenizer::TokenizePlain(absl::string_view text, std::vector<int32_t>* out) const {
  std::string word;
  int64_t chars = 0;
  auto flush = [&] {
    if (chars > 0) WordPiece(word, chars, out);
    word.clear();
    chars = 0;
  };
  for (UChar32 c : NormalizeCodePoints(text, options_)) {
    if (IsWhitespace(c)) {
      flush();
    } else if (IsPunctuation(c)) {
      flush();
      AppendUtf8(c, &word);
      chars = 1;
      flush();
    } else {
      AppendUtf8(c, &word);
      ++chars;
    }
  }
  flush();
}

std::vector<int32_t> WordPieceTokenizer::Tokenize(absl::string_view text) const {
  std::vector<int32_t> ids;
  // Special tokens in the raw text, leftmost first, longest at one position.
  size_t done = 0;
  for (size_t pos = text.find('[');; pos = text.find('[', pos + 1)) {
    if (pos == absl::string_view::npos) break;
    const std::pair<std::string, int32_t>* match = nullptr;
    for (const auto& special : specials_) {
      if (text.substr(pos, special.first.size()) == special.first &&
          (match == nullptr || special.first.size() > match->first.size())) {
        match = &special;
      }
    }
    if (match == nullptr) continue;
    TokenizePlain(text.substr(done, pos - done), &ids);
    ids.push_back(match->second);
    done = pos + match->first.size();
    pos = done - 1;
  }
  TokenizePlain(text.substr(done), &ids);
  return ids;
}

Encoding WordPieceTokenizer::Encode(absl::string_view text, int64_t max_len) const {
  std::vector<int32_t> ids = Tokenize(text);
  if (max_len > 0) {
    const size_t budget = static_cast<size_t>(std::max<int64_t>(max_len, 2) - 2);
    if (ids.size() > budget) ids.resize(budget);
  }
  Encoding e;
  e.ids.reserve(ids.size() + 2);
  e.ids.push_back(cls_id_);
  e.ids.insert(e.ids.end(), ids.begin(), ids.end());
  e.ids.push_back(sep_id_);
  e.token_type_ids.assign(e.ids.size(), 0);
  return e;
}

Encoding WordPieceTokenizer::EncodePair(absl::string_view a, absl::string_view b,
                                        int64_t max_len) const {
  std::vector<int32_t> first = Tokenize(a);
  std::vector<int32_t> second = Tokenize(b);
  if (max_len > 0) {
    // HF tokenizers' truncate_encodings, LongestFirst.
    const size_t budget = static_cast<size_t>(std::max<int64_t>(max_len, 3) - 3);
    if (first.size() + second.size() > budget) {
      size_t n1 = first.size(), n2 = second.size();
      const bool swap = n1 > n2;
      if (swap) std::swap(n1, n2);  // n1: the shorter
      n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
      if (n1 + n2 > budget) {
        n1 = budget / 2;
        n2 = n1 + budget % 2;
      }
      if (swap) std::swap(n1, n2);
      if (first.size() > n1) first.resize(n1);
      if (second.size() > n2) second.resize(n2);
    }
  }
  Encoding e;
  e.ids.reserve(first.size() + second.size() + 3);
  e.ids.push_back(cls_id_);
  e.ids.insert(e.ids.end(), first.begin(), first.end());
  e.ids.push_back(sep_id_);
  e.token_type_ids.assign(e.ids.size(), 0);
  e.ids.insert(e.ids.end(), second.begin(), second.end());
  e.ids.push_back(sep_id_);
  e.token_type_ids.resize(e.ids.size(), 1);
  return e;
}

PaddedBatch PadBatch(const std::vector<Encoding>& batch, int32_t pad_id, int64_t multiple,
                     int64_t min_cols) {
  PaddedBatch out;
  out.rows = static_cast<int64_t>(batch.size());
  for (const Encoding& e : batch) out.cols = std::max<int64_t>(out.cols, e.ids.size());
  if (multiple > 1) out.cols = (out.cols + multiple - 1) / multiple * multiple;
  out.cols = std::max(out.cols, min_cols);
  const size_t total = static_cast<size_t>(out.rows * out.cols);
  out.input_ids.assign(total, pad_id);
  out.token_type_ids.assign(total, 0);
  out.attention_mask.assign(total, 0);
  for (int64_t r = 0; r < out.rows; ++r) {
    const Encoding& e = batch[r];
    const size_t row = static_cast<size_t>(r * out.cols);
    for (size_t i = 0; i < e.ids.size(); ++i) {
      out.input_ids[row + i] = e.ids[i];
      out.token_type_ids[row + i] = i < e.token_type_ids.size() ? e.token_type_ids[i] : 0;
      out.attention_mask[row + i] = 1;
    }
  }
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
