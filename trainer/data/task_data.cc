#include "trainer/data/task_data.h"

#include <algorithm>
#include <limits>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace trainer {

TextBatch PadTexts(const std::vector<Encoding>& encodings, int32_t pad_id, int64_t multiple,
                   int64_t min_cols) {
  PaddedBatch p = PadBatch(encodings, pad_id, multiple, min_cols);
  auto tensor = [&](std::vector<int64_t>& v) {
    return torch::from_blob(v.data(), {p.rows, p.cols}, torch::kLong).clone();
  };
  TextBatch out;
  out.input_ids = tensor(p.input_ids);
  out.token_type_ids = tensor(p.token_type_ids);
  out.attention_mask = tensor(p.attention_mask);
  out.padded = false;
  for (const Encoding& e : encodings) {
    if (static_cast<int64_t>(e.ids.size()) < p.cols) out.padded = true;
  }
  return out;
}

namespace {

// `t` on `device`. From the CPU to a GPU it goes through pinned memory, so the copy is
// asynchronous: from pageable memory CUDA synchronizes the stream first, and the host could no
// longer queue the next step's kernels while the GPU runs this one.
torch::Tensor ToDevice(const torch::Tensor& t, const torch::Device& device) {
  if (!t.defined() || t.device() == device) return t;
  if (!t.device().is_cpu() || device.is_cpu()) return t.to(device);
  return t.pin_memory().to(device, /*non_blocking=*/true);
}

}  // namespace

TextBatch TextBatch::To(const torch::Device& device) const {
  TextBatch out;
  if (!input_ids.defined()) return out;
  out.input_ids = ToDevice(input_ids, device);
  out.token_type_ids = ToDevice(token_type_ids, device);
  out.attention_mask = ToDevice(attention_mask, device);
  out.padded = padded;
  out.prompt_length = prompt_length;
  return out;
}

TaskBatch TaskBatch::To(const torch::Device& device) const {
  TaskBatch out;
  out.size = size;
  out.first = first.To(device);
  out.second = second.To(device);
  out.negatives.reserve(negatives.size());
  for (const TextBatch& n : negatives) out.negatives.push_back(n.To(device));
  out.scores = ToDevice(scores, device);
  out.labels = ToDevice(labels, device);
  out.targets = ToDevice(targets, device);
  out.group_sizes = group_sizes;
  return out;
}

namespace {

// Rows (a, b, negatives...): apart or as an in-batch grid; joint (a, text) pairs with margins.
bool TakesNegatives(const DataKind& kind) {
  return (kind.target == RowTarget::kPositivePairs && (!kind.joint_pair || kind.pair_grid)) ||
         kind.target == RowTarget::kMargin;
}

// The margins of a kMargin row: its number (one negative), one per negative, or the scores
// [positive, negative...] as positive - negative. Empty: none of these shapes.
std::vector<float> Margins(const Example& e) {
  const size_t n = e.negatives.size();
  std::vector<float> out;
  if (e.values.empty() && e.HasScore() && n == 1) {
    out.push_back(static_cast<float>(e.score));
  } else if (e.values.size() == n) {
    for (double v : e.values) out.push_back(static_cast<float>(v));
  } else if (e.values.size() == n + 1) {
    for (size_t k = 1; k <= n; ++k) out.push_back(static_cast<float>(e.values[0] - e.values[k]));
  }
  return out;
}

uint64_t Fnv(const std::vector<int32_t>& ids, uint64_t h = 0xcbf29ce484222325ULL) {
  for (const int32_t id : ids) {
    const uint32_t u = static_cast<uint32_t>(id);
    for (int shift = 0; shift < 32; shift += 8) {
      h ^= (u >> shift) & 0xFF;
      h *= 0x100000001b3ULL;  // FNV-1a 64 prime
    }
  }
  return h;
}

// Whether row i has the texts its kind takes: a list or not, a second text, the negatives of
// the first row.
absl::Status CheckShape(const DataKind& kind, const std::vector<Example>& examples, size_t i,
                        const std::string& source) {
  const Example& e = examples[i];
  const size_t negatives = examples[0].negatives.size();
  const bool takes_negatives = TakesNegatives(kind);
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": row ", i + 1, " ", what));
  };
  const bool list_row = !e.docs.empty();
  if (list_row != (kind.target == RowTarget::kList)) {
    return bad(list_row ? absl::StrCat("has a list of texts; task type ", kind.task,
                                       " takes one text a column")
                        : absl::StrCat("has no list of documents, which task type ", kind.task,
                                       " needs (rows {\"query\": ..., \"docs\": [...], "
                                       "\"labels\": [...]})"));
  }
  if (e.b.empty() && !list_row && kind.target != RowTarget::kVector) {
    return bad(absl::StrCat("has 1 text column; task type ", kind.task, " takes 2"));
  }
  if (!takes_negatives && !e.negatives.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": row ", i + 1, " has ", e.texts(),
                                                   " text columns; task type ", kind.task,
                                                   " takes 2 (choose them with task.columns)"));
  }
  if (e.negatives.size() != negatives) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": row ", i + 1, " has ", e.texts(), " text columns, but row 1 has ",
                     examples[0].texts(), " (task type ", kind.task,
                     " needs the same number of negatives on every row)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TaskData> TaskData::Make(const DataKind& kind, const std::vector<Example>& examples,
                                        const std::string& format, const Tokenizer& tokenizer,
                                        int64_t max_len, const std::string& source) {
  TaskData d;
  d.kind_ = kind;
  d.source_ = source;
  d.pad_id_ = tokenizer.pad_id();
  d.template_ = tokenizer.special_template();
  d.max_len_ = max_len;
  const size_t negatives = examples.empty() ? 0 : examples[0].negatives.size();
  if (TakesNegatives(kind) && !kind.pair_grid) d.negatives_.resize(negatives);
  if (kind.pair_grid) d.grid_.resize(2 + negatives);
  for (size_t i = 0; i < examples.size(); ++i) {
    RETURN_IF_ERROR(CheckShape(kind, examples, i, source));
    bool keep = true;
    RETURN_IF_ERROR(d.AddTarget(examples[i], i, format, &keep));
    if (keep) d.AddTexts(examples[i], tokenizer, max_len);
  }
  if (d.scores_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": no examples usable for task type ", kind.task,
                     kind.target == RowTarget::kPositivePairs ? " (every row is labelled 0)" : ""));
  }
  return d;
}

// Row i's score, label or targets as the kind takes them (*keep false: a row to leave out).
absl::Status TaskData::AddTarget(const Example& e, size_t i, const std::string& format,
                                 bool* keep) {
  const double max_score = (format == "stsb" || format == "sick") ? 5.0 : 1.0;
  const size_t negatives = e.negatives.size();
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": row ", i + 1, " ", what));
  };
  auto missing = [&](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": example ", i + 1, " has no ", what,
                                                   ", which task type ", kind_.task, " needs"));
  };
  switch (kind_.target) {
    case RowTarget::kScore: {
      if (!e.HasScore()) return missing("score");
      const double s = e.score / max_score;
      if (s < 0.0 || s > 1.0) {
        return absl::InvalidArgumentError(absl::StrCat(source_, ": example ", i + 1, " has score ",
                                                       e.score, ", outside [0, ", max_score,
                                                       "] for format ", format));
      }
      scores_.push_back(static_cast<float>(s));
      break;
    }
    case RowTarget::kPositivePairs:
      if (e.HasLabel() && e.label == 0) {  // not a positive pair
        *keep = false;
        return absl::OkStatus();
      }
      scores_.push_back(1.0f);
      break;
    case RowTarget::kBinaryLabel:
      if (!e.HasLabel()) return missing("label");
      if (e.label != 0 && e.label != 1) {
        return absl::InvalidArgumentError(absl::StrCat(source_, ": example ", i + 1, " has label ",
                                                       e.label, ", but task type ", kind_.task,
                                                       " needs 0 or 1"));
      }
      labels_.push_back(e.label);
      num_labels_ = 2;
      scores_.push_back(static_cast<float>(e.label));
      break;
    case RowTarget::kLabel:
      if (!e.HasLabel()) return missing("label");
      labels_.push_back(e.label);
      num_labels_ = std::max<int64_t>(num_labels_, e.label + 1);
      scores_.push_back(0.0f);
      break;
    case RowTarget::kMargin:
    case RowTarget::kVector:
    case RowTarget::kList:
      RETURN_IF_ERROR(AddTeacherTarget(e, i));
      scores_.push_back(0.0f);
      break;
  }
  return absl::OkStatus();
}

// A margin, vector or list row's targets.
absl::Status TaskData::AddTeacherTarget(const Example& e, size_t i) {
  const size_t negatives = e.negatives.size();
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": row ", i + 1, " ", what));
  };
  switch (kind_.target) {
    case RowTarget::kMargin: {
      if (negatives == 0) {
        return bad(absl::StrCat("has no negative; task type ", kind_.task,
                                " needs (query, positive, negative...) rows with a margin"));
      }
      std::vector<float> m = Margins(e);
      if (m.empty()) {
        return bad(
            absl::StrCat("has ",
                         e.values.empty() ? (e.HasScore() ? "one number" : "no label")
                                          : absl::StrCat(e.values.size(), " label values"),
                         " for ", negatives, negatives == 1 ? " negative" : " negatives",
                         "; task type ", kind_.task,
                         " needs a margin per negative, or the scores of the positive and each "
                         "negative"));
      }
      targets_.push_back(std::move(m));
      break;
    }
    case RowTarget::kVector:
      if (e.values.empty()) {
        return bad(
            absl::StrCat("has no list of numbers (the teacher's embedding), which task "
                         "type ",
                         kind_.task, " needs"));
      }
      if (!e.b.empty())
        return bad(absl::StrCat("has 2 text columns; task type ", kind_.task,
                                " takes 1 and a list of numbers"));
      if (!targets_.empty() && targets_.front().size() != e.values.size()) {
        return bad(absl::StrCat("has ", e.values.size(), " numbers, but row 1 has ",
                                targets_.front().size()));
      }
      targets_.emplace_back(e.values.begin(), e.values.end());
      break;
    case RowTarget::kList:
      if (e.values.size() != e.docs.size()) {
        return bad(absl::StrCat("has ", e.docs.size(), " documents but ", e.values.size(),
                                " relevance labels"));
      }
      targets_.emplace_back(e.values.begin(), e.values.end());
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

// Row e's texts, tokenized as the kind encodes them.
void TaskData::AddTexts(const Example& e, const Tokenizer& tokenizer, int64_t max_len) {
  if (kind_.target == RowTarget::kList) {
    std::vector<Encoding> pairs;
    const std::vector<int32_t> query = tokenizer.Tokenize(e.a);
    for (const std::string& doc : e.docs) {
      pairs.push_back(JoinPair(query, tokenizer.Tokenize(doc), template_, max_len));
    }
    first_.push_back(*std::max_element(
        pairs.begin(), pairs.end(),
        [](const Encoding& x, const Encoding& y) { return x.ids.size() < y.ids.size(); }));
    lists_.push_back(std::move(pairs));
  } else if (kind_.pair_grid) {
    grid_[0].push_back(tokenizer.Tokenize(e.a));
    grid_[1].push_back(tokenizer.Tokenize(e.b));
    for (size_t k = 0; k < e.negatives.size(); ++k) {
      grid_[2 + k].push_back(tokenizer.Tokenize(e.negatives[k]));
    }
    first_.push_back(JoinPair(grid_[0].back(), grid_[1].back(), template_, max_len));
  } else if (kind_.joint_pair) {
    first_.push_back(tokenizer.EncodePair(e.a, e.b, max_len));
    for (size_t k = 0; k < e.negatives.size(); ++k) {
      negatives_[k].push_back(tokenizer.EncodePair(e.a, e.negatives[k], max_len));
    }
  } else {
    first_.push_back(tokenizer.Encode(e.a, max_len));
    if (kind_.target != RowTarget::kVector) second_.push_back(tokenizer.Encode(e.b, max_len));
    for (size_t k = 0; k < e.negatives.size(); ++k) {
      negatives_[k].push_back(tokenizer.Encode(e.negatives[k], max_len));
    }
  }
}

int64_t TaskData::tokens(int64_t i) const {
  size_t n = first_[i].ids.size();
  if (!lists_.empty()) {
    n = 0;
    for (const Encoding& e : lists_[i]) n += e.ids.size();
  }
  if (!second_.empty()) n += second_[i].ids.size();
  for (const std::vector<Encoding>& column : negatives_) n += column[i].ids.size();
  return static_cast<int64_t>(n);
}

ExampleLengths TaskData::Lengths() const {
  ExampleLengths out;
  for (const Encoding& e : first_) out.first.push_back(static_cast<int64_t>(e.ids.size()));
  for (const Encoding& e : second_) out.second.push_back(static_cast<int64_t>(e.ids.size()));
  // Joint pairs (no second text): the longest of the pair and the (a, negative) pairs.
  std::vector<int64_t>& longest = second_.empty() ? out.first : out.second;
  for (const std::vector<Encoding>& column : negatives_) {
    for (size_t i = 0; i < column.size(); ++i) {
      longest[i] = std::max(longest[i], static_cast<int64_t>(column[i].ids.size()));
    }
  }
  return out;
}

std::vector<uint64_t> TaskData::TextKeys(int64_t i) const {
  std::vector<uint64_t> out;
  if (!grid_.empty()) {  // each text apart: an anchor or candidate twice is a false negative
    for (const auto& column : grid_) out.push_back(Fnv(column[i]));
    return out;
  }
  out.push_back(Fnv(first_[i].ids));
  if (!second_.empty()) out.push_back(Fnv(second_[i].ids));
  for (const std::vector<Encoding>& column : negatives_) out.push_back(Fnv(column[i].ids));
  return out;
}

TaskBatch TaskData::GridBatch(const std::vector<int64_t>& indices, int64_t pad_multiple,
                              PadLengths pad) const {
  TaskBatch b;
  b.size = static_cast<int64_t>(indices.size());
  const size_t n = indices.size(), columns = grid_.size() - 1;  // candidate columns
  const size_t others = (n - 1) * columns;
  const bool sample =
      kind_.grid_negatives > 0 && static_cast<size_t>(kind_.grid_negatives) < others;
  uint64_t seed = 0xcbf29ce484222325ULL;
  for (int64_t i : indices)
    seed = Fnv({static_cast<int32_t>(i), static_cast<int32_t>(i >> 31)}, seed);
  std::mt19937_64 rng(seed);
  std::vector<Encoding> pairs;
  for (size_t r = 0; r < n; ++r) {
    const std::vector<int32_t>& anchor = grid_[0][indices[r]];
    std::vector<std::pair<size_t, size_t>> candidates;  // (column, row)
    for (size_t c = 1; c <= columns; ++c) {
      for (size_t j = 0; j < n; ++j) {
        if (j != r) candidates.emplace_back(c, j);
      }
    }
    if (sample) {
      std::shuffle(candidates.begin(), candidates.end(), rng);
      candidates.resize(static_cast<size_t>(kind_.grid_negatives));
    }
    candidates.insert(candidates.begin(), {1, r});
    for (size_t c = 2; c <= columns; ++c) candidates.emplace_back(c, r);
    for (const auto& [c, j] : candidates) {
      pairs.push_back(JoinPair(anchor, grid_[c][indices[j]], template_, max_len_));
    }
    b.group_sizes.push_back(static_cast<int64_t>(candidates.size()));
  }
  b.first = PadTexts(pairs, pad_id_, pad_multiple, pad.first);
  return b;
}

TaskBatch TaskData::ListBatch(const std::vector<int64_t>& indices, int64_t pad_multiple,
                              PadLengths pad) const {
  TaskBatch b;
  b.size = static_cast<int64_t>(indices.size());
  std::vector<Encoding> pairs;
  size_t longest = 0;
  for (int64_t i : indices) {
    pairs.insert(pairs.end(), lists_[i].begin(), lists_[i].end());
    b.group_sizes.push_back(static_cast<int64_t>(lists_[i].size()));
    longest = std::max(longest, lists_[i].size());
  }
  b.first = PadTexts(pairs, pad_id_, pad_multiple, pad.first);
  b.targets = torch::full({b.size, static_cast<int64_t>(longest)},
                          -std::numeric_limits<float>::infinity(), torch::kFloat);
  auto t = b.targets.accessor<float, 2>();
  for (size_t r = 0; r < indices.size(); ++r) {
    const std::vector<float>& v = targets_[indices[r]];
    for (size_t k = 0; k < v.size(); ++k) t[r][k] = v[k];
  }
  return b;
}

TaskBatch TaskData::Batch(const std::vector<int64_t>& indices, int64_t pad_multiple,
                          PadLengths pad) const {
  if (!lists_.empty()) return ListBatch(indices, pad_multiple, pad);
  if (!grid_.empty()) return GridBatch(indices, pad_multiple, pad);
  TaskBatch b;
  b.size = static_cast<int64_t>(indices.size());
  std::vector<Encoding> first, second;
  std::vector<float> scores;
  std::vector<int64_t> labels;
  for (int64_t i : indices) {
    first.push_back(first_[i]);
    if (!second_.empty()) second.push_back(second_[i]);
    scores.push_back(scores_[i]);
    if (!labels_.empty()) labels.push_back(labels_[i]);
  }
  b.first = PadTexts(first, pad_id_, pad_multiple, pad.first);
  if (!second.empty()) b.second = PadTexts(second, pad_id_, pad_multiple, pad.second);
  for (const std::vector<Encoding>& column : negatives_) {
    std::vector<Encoding> texts;
    texts.reserve(indices.size());
    for (int64_t i : indices) texts.push_back(column[i]);
    b.negatives.push_back(
        PadTexts(texts, pad_id_, pad_multiple, second_.empty() ? pad.first : pad.second));
  }
  auto prompt = [&](size_t column) {
    return column < prompt_lengths_.size() ? prompt_lengths_[column] : int64_t{0};
  };
  b.first.prompt_length = prompt(0);
  b.second.prompt_length = prompt(1);
  for (size_t k = 0; k < b.negatives.size(); ++k) b.negatives[k].prompt_length = prompt(2 + k);
  if (kind_.target == RowTarget::kScore || kind_.target == RowTarget::kBinaryLabel) {
    b.scores = torch::tensor(scores, torch::kFloat);
  }
  if (!labels.empty()) b.labels = torch::tensor(labels, torch::kLong);
  if (!targets_.empty() && !indices.empty()) {
    const int64_t width = static_cast<int64_t>(targets_[indices.front()].size());
    std::vector<float> flat;
    flat.reserve(indices.size() * width);
    for (int64_t i : indices) flat.insert(flat.end(), targets_[i].begin(), targets_[i].end());
    b.targets = torch::tensor(flat, torch::kFloat).view({b.size, width});
  }
  return b;
}

}  // namespace trainer
}  // namespace tunefleet
