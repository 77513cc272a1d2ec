#include "trainer/data/tokenizer.h"

#include <algorithm>
#include <utility>

namespace tunefleet {
namespace trainer {
namespace {

// HF's AddedToken lstrip / rstrip take Unicode whitespace; here the ASCII kind (what appears
// next to special tokens in practice).
size_t WhitespaceBefore(absl::string_view text) {
  size_t n = 0;
  while (n < text.size()) {
    const char c = text[text.size() - 1 - n];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      ++n;
    } else {
      break;
    }
  }
  return n;
}

size_t WhitespaceAfter(absl::string_view text) {
  size_t n = 0;
  while (n < text.size() && (text[n] == ' ' || text[n] == '\t' || text[n] == '\n' ||
                             text[n] == '\r' || text[n] == '\v' || text[n] == '\f')) {
    ++n;
  }
  return n;
}

void Append(const std::vector<int32_t>& ids, int32_t type, Encoding* e) {
  e->ids.insert(e->ids.end(), ids.begin(), ids.end());
  e->token_type_ids.resize(e->ids.size(), type);
}

}  // namespace

SpecialTemplate SpecialTemplate::Bert(int32_t cls, int32_t sep) {
  SpecialTemplate t;
  t.single_prefix = t.pair_prefix = {cls};
  t.single_suffix = t.pair_middle = t.pair_suffix = {sep};
  t.second_type_id = 1;
  return t;
}

SpecialTemplate SpecialTemplate::Roberta(int32_t cls, int32_t sep) {
  SpecialTemplate t;
  t.single_prefix = t.pair_prefix = {cls};
  t.single_suffix = t.pair_suffix = {sep};
  t.pair_middle = {sep, sep};
  t.second_type_id = 0;
  return t;
}

void Tokenizer::set_added_tokens(std::vector<AddedToken> tokens) {
  added_ = std::move(tokens);
  added_first_bytes_.clear();
  for (const AddedToken& t : added_) {
    if (!t.content.empty() && added_first_bytes_.find(t.content[0]) == std::string::npos) {
      added_first_bytes_.push_back(t.content[0]);
    }
  }
}

std::vector<int32_t> Tokenizer::Tokenize(absl::string_view text) const {
  std::vector<int32_t> ids;
  size_t done = 0;  // text before `done` is tokenized
  size_t pos = 0;
  while ((pos = text.find_first_of(added_first_bytes_, pos)) != absl::string_view::npos) {
    const AddedToken* match = nullptr;
    for (const AddedToken& t : added_) {
      if (!t.content.empty() && text.substr(pos, t.content.size()) == t.content &&
          (match == nullptr || t.content.size() > match->content.size())) {
        match = &t;
      }
    }
    if (match == nullptr) {
      ++pos;
      continue;
    }
    absl::string_view before = text.substr(done, pos - done);
    if (match->lstrip) before.remove_suffix(WhitespaceBefore(before));
    TokenizeSegment(before, &ids);
    ids.push_back(match->id);
    pos += match->content.size();
    if (match->rstrip) pos += WhitespaceAfter(text.substr(pos));
    done = pos;
  }
  TokenizeSegment(text.substr(done), &ids);
  return ids;
}

Encoding Tokenizer::Encode(absl::string_view text, int64_t max_len) const {
  std::vector<int32_t> ids = Tokenize(text);
  const int64_t specials = static_cast<int64_t>(template_.single_count());
  if (max_len > 0) {
    const size_t budget = static_cast<size_t>(std::max(max_len, specials) - specials);
    if (ids.size() > budget) ids.resize(budget);
  }
  Encoding e;
  e.ids.reserve(ids.size() + specials);
  Append(template_.single_prefix, 0, &e);
  Append(ids, 0, &e);
  Append(template_.single_suffix, 0, &e);
  return e;
}

Encoding Tokenizer::EncodePair(absl::string_view a, absl::string_view b, int64_t max_len) const {
  return JoinPair(Tokenize(a), Tokenize(b), template_, max_len);
}

Encoding JoinPair(std::vector<int32_t> first, std::vector<int32_t> second, const SpecialTemplate& t,
                  int64_t max_len) {
  const int64_t specials = static_cast<int64_t>(t.pair_count());
  if (max_len > 0) {
    // HF tokenizers' truncate_encodings, LongestFirst.
    const size_t budget = static_cast<size_t>(std::max(max_len, specials) - specials);
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
  e.ids.reserve(first.size() + second.size() + specials);
  Append(t.pair_prefix, 0, &e);
  Append(first, 0, &e);
  Append(t.pair_middle, 0, &e);
  Append(second, t.second_type_id, &e);
  Append(t.pair_suffix, t.second_type_id, &e);
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
