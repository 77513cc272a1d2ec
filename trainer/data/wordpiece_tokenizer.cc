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
  for (const std::string* name :
       {&options.cls_token, &options.sep_token, &options.unk_token, &options.pad_token}) {
    if (t.TokenId(*name) < 0) missing.push_back(*name);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": vocab lacks the special token(s) ", absl::StrJoin(missing, ", "),
                     " (", tokens.size(), " lines; is this a WordPiece vocab.txt?)"));
  }
  t.pad_id_ = t.TokenId(options.pad_token);
  t.unk_id_ = t.TokenId(options.unk_token);
  t.cls_id_ = t.TokenId(options.cls_token);
  t.sep_id_ = t.TokenId(options.sep_token);
  t.template_ = SpecialTemplate::Bert(t.cls_id_, t.sep_id_);
  std::vector<AddedToken> added;
  for (const std::string* name : {&options.pad_token, &options.unk_token, &options.cls_token,
                                  &options.sep_token, &options.mask_token}) {
    const int32_t id = t.TokenId(*name);
    const bool seen = std::any_of(added.begin(), added.end(),
                                  [&](const AddedToken& a) { return a.content == *name; });
    if (id >= 0 && !seen) added.push_back(AddedToken{*name, id});
  }
  t.set_added_tokens(std::move(added));
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

// A special token's name under `key` of `j`: a string, or an object with "content" (older
// tokenizer_config.json files); absent or null keeps `out`.
absl::Status ReadToken(const nlohmann::json& j, const std::string& path, const char* key,
                       std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (it->is_string()) {
    *out = it->get<std::string>();
  } else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    *out = (*it)["content"].get<std::string>();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": key \"", key, "\" must be a token string, not ", it->dump()));
  }
  return absl::OkStatus();
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
  absl::StatusOr<nlohmann::json> fast = ReadJsonObject(JoinPath(dir, "tokenizer.json"));
  if (!fast.ok()) return fast.status();
  absl::StatusOr<nlohmann::json> config = ReadJsonObject(JoinPath(dir, "tokenizer_config.json"));
  if (!config.ok()) return config.status();
  return OptionsFromFiles(dir, *fast, *config);
}

absl::StatusOr<WordPieceTokenizer::Options> WordPieceTokenizer::OptionsFromFiles(
    const std::string& dir, const nlohmann::json& fast, const nlohmann::json& config) {
  Options options;
  // tokenizer.json first (a fast tokenizer's own normalizer), then tokenizer_config.json, whose
  // settings transformers applies over it.
  const std::string fast_path = JoinPath(dir, "tokenizer.json");
  if (fast.is_object()) {
    auto normalizer = fast.find("normalizer");
    if (normalizer != fast.end() && normalizer->is_object() &&
        normalizer->value("type", "") == "BertNormalizer") {
      absl::Status s = ReadOptions(*normalizer, fast_path + " (normalizer)", "lowercase",
                                   "strip_accents", "handle_chinese_chars", &options);
      if (!s.ok()) return s;
    }
    auto model = fast.find("model");
    if (model != fast.end() && model->is_object()) {
      absl::Status s = ReadToken(*model, fast_path + " (model)", "unk_token", &options.unk_token);
      if (!s.ok()) return s;
    }
  }
  const std::string config_path = JoinPath(dir, "tokenizer_config.json");
  if (config.is_object()) {
    absl::Status s = ReadOptions(config, config_path, "do_lower_case", "strip_accents",
                                 "tokenize_chinese_chars", &options);
    if (!s.ok()) return s;
    for (auto [key, token] : {std::pair<const char*, std::string*>{"cls_token", &options.cls_token},
                              {"sep_token", &options.sep_token},
                              {"unk_token", &options.unk_token},
                              {"pad_token", &options.pad_token},
                              {"mask_token", &options.mask_token}}) {
      if (absl::Status t = ReadToken(config, config_path, key, token); !t.ok()) return t;
    }
  }
  return options;
}

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::FromModelFolder(const std::string& dir) {
  absl::StatusOr<nlohmann::json> fast = ReadJsonObject(JoinPath(dir, "tokenizer.json"));
  if (!fast.ok()) return fast.status();
  absl::StatusOr<nlohmann::json> config = ReadJsonObject(JoinPath(dir, "tokenizer_config.json"));
  if (!config.ok()) return config.status();
  return FromModelFiles(dir, *fast, *config);
}

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::FromModelFiles(
    const std::string& dir, const nlohmann::json& fast, const nlohmann::json& config) {
  absl::StatusOr<Options> options = OptionsFromFiles(dir, fast, config);
  if (!options.ok()) return options.status();
  const std::string vocab = JoinPath(dir, "vocab.txt");
  if (PathExists(vocab) || !fast.is_object()) return FromVocabFile(vocab, *options);
  // A folder transformers 5 saved: the vocabulary is tokenizer.json's model.vocab.
  const std::string fast_path = JoinPath(dir, "tokenizer.json");
  auto model = fast.find("model");
  if (model == fast.end() || !model->is_object() || model->value("type", "") != "WordPiece" ||
      !model->contains("vocab") || !(*model)["vocab"].is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        fast_path, ": key \"model\" is no WordPiece model with a \"vocab\" object, and ", dir,
        " has no vocab.txt"));
  }
  const nlohmann::json& words = (*model)["vocab"];
  std::vector<std::string> tokens(words.size());
  for (const auto& [token, id] : words.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= static_cast<int64_t>(tokens.size())) {
      return absl::InvalidArgumentError(absl::StrCat(fast_path, ": key \"model.vocab\": ", token,
                                                     " has id ", id.dump(), ", not in [0, ",
                                                     tokens.size(), ")"));
    }
    tokens[id.get<int64_t>()] = token;
  }
  return FromTokens(tokens, fast_path + " (model.vocab)", *options);
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

void WordPieceTokenizer::TokenizeSegment(absl::string_view text, std::vector<int32_t>* out) const {
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

}  // namespace trainer
}  // namespace tunefleet
