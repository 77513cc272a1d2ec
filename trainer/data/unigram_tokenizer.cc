#include "trainer/data/unigram_tokenizer.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "nlohmann/json.hpp"
#include "trainer/data/proto/sentencepiece_model.pb.h"
#include "trainer/data/utf8_check.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kMetaspace[] = "\xE2\x96\x81";  // U+2581
constexpr size_t kMetaspaceSize = 3;

// Unicode White_Space (Rust's char::is_whitespace, which HF's WhitespaceSplit uses): the byte
// length of the whitespace character at text[i], or 0.
size_t WhitespaceAt(absl::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return 1;
  if (c < 0x80) return 0;
  auto at = [&](size_t k) -> unsigned {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
  };
  if (c == 0xC2 && (at(1) == 0x85 || at(1) == 0xA0)) return 2;  // U+0085, U+00A0
  if (c == 0xE1 && at(1) == 0x9A && at(2) == 0x80) return 3;    // U+1680
  if (c == 0xE2 && at(1) == 0x80) {
    const unsigned t = at(2);
    // U+2000..200A, U+2028, U+2029, U+202F
    if ((t >= 0x80 && t <= 0x8A) || t == 0xA8 || t == 0xA9 || t == 0xAF) return 3;
  }
  if (c == 0xE2 && at(1) == 0x81 && at(2) == 0x9F) return 3;  // U+205F
  if (c == 0xE3 && at(1) == 0x80 && at(2) == 0x80) return 3;  // U+3000
  return 0;
}

absl::Status JsonError(const std::string& path, const std::string& key, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", key, ": ", what));
}

// The Precompiled normalizer of a tokenizer.json "normalizer" value; a Replace of runs of spaces
// by one space is accepted and skipped (WhitespaceSplit drops every space after it anyway).
absl::Status ReadNormalizer(const nlohmann::json& value, const std::string& path,
                            const std::string& key, std::string* charsmap, int* precompiled) {
  if (value.is_null()) return absl::OkStatus();
  if (!value.is_object() || !value.contains("type") || !value["type"].is_string()) {
    return JsonError(path, key, "expected an object with a \"type\"");
  }
  const std::string type = value["type"].get<std::string>();
  if (type == "Sequence") {
    const auto it = value.find("normalizers");
    if (it == value.end() || !it->is_array()) {
      return JsonError(path, key + ".normalizers", "expected an array");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const absl::Status status = ReadNormalizer(
          (*it)[i], path, absl::StrCat(key, ".normalizers[", i, "]"), charsmap, precompiled);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  if (type == "Precompiled") {
    const auto it = value.find("precompiled_charsmap");
    if (it == value.end() || !(it->is_string() || it->is_null())) {
      return JsonError(path, key + ".precompiled_charsmap", "expected a base64 string");
    }
    if (it->is_string() && !absl::Base64Unescape(it->get<std::string>(), charsmap)) {
      return JsonError(path, key + ".precompiled_charsmap", "not valid base64");
    }
    ++*precompiled;
    return absl::OkStatus();
  }
  if (type == "Replace") {
    const auto pattern = value.find("pattern");
    const auto content = value.find("content");
    const bool spaces =
        pattern != value.end() && pattern->is_object() &&
        ((pattern->contains("Regex") && (*pattern)["Regex"] == " {2,}") ||
         (pattern->contains("String") && (*pattern)["String"].is_string() &&
          !(*pattern)["String"].get<std::string>().empty() &&
          (*pattern)["String"].get<std::string>().find_first_not_of(' ') == std::string::npos));
    if (!spaces || content == value.end() || *content != " ") {
      return JsonError(path, key, "unsupported Replace (only runs of spaces by one space)");
    }
    return absl::OkStatus();
  }
  return JsonError(path, key + ".type", absl::StrCat("unsupported normalizer \"", type, "\""));
}

}  // namespace

absl::StatusOr<UnigramTokenizer> UnigramTokenizer::FromSentencePieceModel(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat(path, ": cannot read the SentencePiece model (",
                                     bytes.status().message(), ")"));
  }
  spm::ModelProto proto;
  if (bytes->empty() || !proto.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a SentencePiece model (cannot parse a ModelProto)"));
  }
  auto error = [&](const std::string& key, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", key, ": ", what));
  };
  if (proto.trainer_spec().model_type() != spm::TrainerSpec::UNIGRAM) {
    return error("trainer_spec.model_type",
                 absl::StrCat("a unigram model is needed, not type ",
                              static_cast<int>(proto.trainer_spec().model_type())));
  }
  if (proto.trainer_spec().byte_fallback()) {
    return error("trainer_spec.byte_fallback", "byte fallback is not supported");
  }
  using Piece = spm::ModelProto::SentencePiece;
  const char* const kFirst[] = {"<unk>", "<s>", "</s>"};
  const Piece::Type kFirstType[] = {Piece::UNKNOWN, Piece::CONTROL, Piece::CONTROL};
  if (proto.pieces_size() < 4) {
    return error("pieces", absl::StrCat("only ", proto.pieces_size(), " pieces"));
  }
  for (int i = 0; i < 3; ++i) {
    if (proto.pieces(i).piece() != kFirst[i] || proto.pieces(i).type() != kFirstType[i]) {
      return error(absl::StrCat("pieces[", i, "]"),
                   absl::StrCat("expected ", kFirst[i], " (fairseq's id mapping), found \"",
                                proto.pieces(i).piece(), "\""));
    }
  }
  std::vector<std::pair<std::string, double>> vocab = {
      {"<s>", 0.0}, {"<pad>", 0.0}, {"</s>", 0.0}, {"<unk>", 0.0}};
  vocab.reserve(proto.pieces_size() + 2);
  for (int i = 3; i < proto.pieces_size(); ++i) {
    vocab.emplace_back(proto.pieces(i).piece(), static_cast<double>(proto.pieces(i).score()));
  }
  vocab.emplace_back("<mask>", 0.0);
  UnigramTokenizer tokenizer;
  absl::StatusOr<PrecompiledNormalizer> normalizer =
      PrecompiledNormalizer::FromBlob(proto.normalizer_spec().precompiled_charsmap(),
                                      absl::StrCat(path, ": normalizer_spec.precompiled_charsmap"));
  if (!normalizer.ok()) return normalizer.status();
  tokenizer.normalizer_ = *std::move(normalizer);
  tokenizer.prepend_ = proto.normalizer_spec().add_dummy_prefix();
  absl::Status status = tokenizer.SetVocab(vocab, /*unk_id=*/3, path);
  if (!status.ok()) return status;
  tokenizer.pad_id_ = 1;
  tokenizer.template_ = SpecialTemplate::Roberta(0, 2);
  const int32_t mask = static_cast<int32_t>(vocab.size()) - 1;
  tokenizer.set_added_tokens(
      {{"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}, {"<mask>", mask}});
  return tokenizer;
}

absl::StatusOr<UnigramTokenizer> UnigramTokenizer::FromTokenizerJson(
    const nlohmann::json& model, const nlohmann::json& normalizer, const std::string& path) {
  if (!model.is_object()) return JsonError(path, "model", "expected an object");
  if (!model.contains("type") || model["type"] != "Unigram") {
    return JsonError(path, "model.type", "expected \"Unigram\"");
  }
  if (model.contains("byte_fallback") && model["byte_fallback"] != false) {
    return JsonError(path, "model.byte_fallback", "byte fallback is not supported");
  }
  const auto vocab_json = model.find("vocab");
  if (vocab_json == model.end() || !vocab_json->is_array() || vocab_json->empty()) {
    return JsonError(path, "model.vocab", "expected a non-empty array of [piece, score]");
  }
  std::vector<std::pair<std::string, double>> vocab;
  vocab.reserve(vocab_json->size());
  for (size_t i = 0; i < vocab_json->size(); ++i) {
    const nlohmann::json& entry = (*vocab_json)[i];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number()) {
      return JsonError(path, absl::StrCat("model.vocab[", i, "]"), "expected [piece, score]");
    }
    vocab.emplace_back(entry[0].get<std::string>(), entry[1].get<double>());
  }
  const auto unk = model.find("unk_id");
  if (unk == model.end() || !unk->is_number_integer() || unk->get<int64_t>() < 0 ||
      unk->get<int64_t>() >= static_cast<int64_t>(vocab.size())) {
    return JsonError(path, "model.unk_id",
                     absl::StrCat("expected an id in [0, ", vocab.size(), ")"));
  }
  std::string charsmap;
  int precompiled = 0;
  absl::Status status = ReadNormalizer(normalizer, path, "normalizer", &charsmap, &precompiled);
  if (!status.ok()) return status;
  if (precompiled > 1) {
    return JsonError(path, "normalizer", "more than one Precompiled normalizer");
  }
  UnigramTokenizer tokenizer;
  absl::StatusOr<PrecompiledNormalizer> parsed =
      PrecompiledNormalizer::FromBlob(charsmap, absl::StrCat(path, ": normalizer"));
  if (!parsed.ok()) return parsed.status();
  tokenizer.normalizer_ = *std::move(parsed);
  status = tokenizer.SetVocab(vocab, static_cast<int32_t>(unk->get<int64_t>()), path);
  if (!status.ok()) return status;
  tokenizer.pad_id_ = tokenizer.TokenId("<pad>");
  return tokenizer;
}

absl::Status UnigramTokenizer::SetVocab(const std::vector<std::pair<std::string, double>>& vocab,
                                        int32_t unk_id, const std::string& source) {
  if (vocab.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": vocabulary too large"));
  }
  scores_.clear();
  node_ids_.assign(1, -1);
  min_score_ = vocab.empty() ? 0.0 : vocab[0].second;
  for (size_t id = 0; id < vocab.size(); ++id) {
    const auto& [piece, score] = vocab[id];
    if (piece.empty() || !IsValidUtf8(piece)) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": vocabulary entry ", id, " is empty or not UTF-8"));
    }
    scores_.push_back(score);
    min_score_ = std::min(min_score_, score);
    ids_[piece] = static_cast<int32_t>(id);
    int32_t node = 0;
    for (const char c : piece) {
      const uint64_t key = (static_cast<uint64_t>(node) << 8) | static_cast<unsigned char>(c);
      auto [it, inserted] = edges_.try_emplace(key, static_cast<int32_t>(node_ids_.size()));
      if (inserted) node_ids_.push_back(-1);
      node = it->second;
    }
    node_ids_[node] = static_cast<int32_t>(id);  // the last id of a repeated piece
  }
  unk_id_ = unk_id;
  return absl::OkStatus();
}

int32_t UnigramTokenizer::TokenId(const std::string& token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

int32_t UnigramTokenizer::Child(int32_t node, unsigned char byte) const {
  const auto it = edges_.find((static_cast<uint64_t>(node) << 8) | byte);
  return it == edges_.end() ? -1 : it->second;
}

std::vector<std::string> UnigramTokenizer::PreTokenize(absl::string_view text) const {
  std::string repaired;
  if (!IsValidUtf8(text)) {
    repaired = ReplaceInvalidUtf8(text);
    text = repaired;
  }
  const std::string normalized = normalizer_.Normalize(text);
  std::vector<std::string> pieces;
  const absl::string_view s = normalized;
  const absl::string_view metaspace(kMetaspace, kMetaspaceSize);
  size_t i = 0;
  while (i < s.size()) {
    size_t w = 0;
    while (i < s.size() && (w = WhitespaceAt(s, i)) > 0) i += w;
    if (i >= s.size()) break;
    size_t end = i;
    while (end < s.size() && WhitespaceAt(s, end) == 0) {
      end += std::min(Utf8SequenceLength(s[end]), s.size() - end);
    }
    const absl::string_view word = s.substr(i, end - i);
    i = end;
    // Metaspace: prepend "▁", then a piece starts at each "▁".
    std::string current = prepend_ && !absl::StartsWith(word, metaspace) ? kMetaspace : "";
    for (size_t k = 0; k < word.size();) {
      if (word.substr(k, kMetaspaceSize) == metaspace && !current.empty()) {
        pieces.push_back(std::move(current));
        current.clear();
      }
      const size_t n = std::min(Utf8SequenceLength(word[k]), word.size() - k);
      current.append(word.data() + k, n);
      k += n;
    }
    if (!current.empty()) pieces.push_back(std::move(current));
  }
  return pieces;
}

void UnigramTokenizer::TokenizeSegment(absl::string_view text, std::vector<int32_t>* out) const {
  for (const std::string& piece : PreTokenize(text)) TokenizePiece(piece, out);
}

// HF's Unigram::encode_optimized (sentencepiece's optimized Viterbi): best_[end] keeps the best
// path ending at byte `end`; a later candidate replaces it only on a strictly higher score.
void UnigramTokenizer::TokenizePiece(absl::string_view piece, std::vector<int32_t>* out) const {
  struct Best {
    double score = 0.0;
    int32_t id = -1;
    int32_t start = -1;  // -1: not reached yet
  };
  const size_t size = piece.size();
  std::vector<Best> best(size + 1);
  const double unk_score = min_score_ - kUnknownPenalty;
  auto offer = [&](size_t start, size_t end, int32_t id, double score) {
    Best& target = best[end];
    if (target.start < 0 || score > target.score) {
      target = {score, id, static_cast<int32_t>(start)};
    }
  };
  for (size_t start = 0; start < size;) {
    const double till_here = best[start].score;
    const size_t char_len = std::min(Utf8SequenceLength(piece[start]), size - start);
    bool single = false;
    int32_t node = 0;
    for (size_t k = start; k < size; ++k) {
      node = Child(node, static_cast<unsigned char>(piece[k]));
      if (node < 0) break;
      const int32_t id = node_ids_[node];
      if (id < 0) continue;
      offer(start, k + 1, id, till_here + scores_[id]);
      if (k + 1 - start == char_len) single = true;
    }
    if (!single) offer(start, start + char_len, unk_id_, till_here + unk_score);
    start += char_len;
  }
  // Back from the end; consecutive unknowns fuse, and every token is looked up by its text.
  std::vector<std::pair<size_t, size_t>> spans;  // reversed
  size_t end = size;
  size_t fused_start = 0, fused_end = 0;
  bool fusing = false;
  while (end > 0) {
    const Best& node = best[end];
    const size_t start = static_cast<size_t>(node.start);
    if (node.id == unk_id_) {
      if (!fusing) fused_end = end;
      fusing = true;
      fused_start = start;
    } else {
      if (fusing) spans.emplace_back(fused_start, fused_end);
      fusing = false;
      spans.emplace_back(start, end);
    }
    end = start;
  }
  if (fusing) spans.emplace_back(fused_start, fused_end);
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    const auto found = ids_.find(piece.substr(it->first, it->second - it->first));
    out->push_back(found == ids_.end() ? unk_id_ : found->second);
  }
}

}  // namespace trainer
}  // namespace tunefleet
