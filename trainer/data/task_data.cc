#include "trainer/data/task_data.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

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
  return out;
}

absl::StatusOr<TaskData> TaskData::Make(const DataKind& kind, const std::vector<Example>& examples,
                                        const std::string& format, const Tokenizer& tokenizer,
                                        int64_t max_len, const std::string& source) {
  TaskData d;
  d.kind_ = kind;
  d.source_ = source;
  d.pad_id_ = tokenizer.pad_id();
  const double max_score = (format == "stsb" || format == "sick") ? 5.0 : 1.0;
  const bool takes_negatives = kind.target == RowTarget::kPositivePairs && !kind.joint_pair;
  const size_t negatives = examples.empty() ? 0 : examples[0].negatives.size();
  if (takes_negatives) d.negatives_.resize(negatives);
  for (size_t i = 0; i < examples.size(); ++i) {
    const Example& e = examples[i];
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
    auto missing = [&](const char* what) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": example ", i + 1, " has no ", what,
                                                     ", which task type ", kind.task, " needs"));
    };
    switch (kind.target) {
      case RowTarget::kScore: {
        if (!e.HasScore()) return missing("score");
        const double s = e.score / max_score;
        if (s < 0.0 || s > 1.0) {
          return absl::InvalidArgumentError(absl::StrCat(source, ": example ", i + 1, " has score ",
                                                         e.score, ", outside [0, ", max_score,
                                                         "] for format ", format));
        }
        d.scores_.push_back(static_cast<float>(s));
        break;
      }
      case RowTarget::kPositivePairs:
        if (e.HasLabel() && e.label == 0) continue;  // not a positive pair
        d.scores_.push_back(1.0f);
        break;
      case RowTarget::kBinaryLabel:
        if (!e.HasLabel()) return missing("label");
        if (e.label != 0 && e.label != 1) {
          return absl::InvalidArgumentError(absl::StrCat(source, ": example ", i + 1, " has label ",
                                                         e.label, ", but task type ", kind.task,
                                                         " needs 0 or 1"));
        }
        d.labels_.push_back(e.label);
        d.num_labels_ = 2;
        d.scores_.push_back(static_cast<float>(e.label));
        break;
      case RowTarget::kLabel:
        if (!e.HasLabel()) return missing("label");
        d.labels_.push_back(e.label);
        d.num_labels_ = std::max<int64_t>(d.num_labels_, e.label + 1);
        d.scores_.push_back(0.0f);
        break;
    }
    if (kind.joint_pair) {
      d.first_.push_back(tokenizer.EncodePair(e.a, e.b, max_len));
    } else {
      d.first_.push_back(tokenizer.Encode(e.a, max_len));
      d.second_.push_back(tokenizer.Encode(e.b, max_len));
      for (size_t k = 0; k < e.negatives.size(); ++k) {
        d.negatives_[k].push_back(tokenizer.Encode(e.negatives[k], max_len));
      }
    }
  }
  if (d.scores_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": no examples usable for task type ", kind.task,
                     kind.target == RowTarget::kPositivePairs ? " (every row is labelled 0)" : ""));
  }
  return d;
}

int64_t TaskData::tokens(int64_t i) const {
  size_t n = first_[i].ids.size();
  if (!second_.empty()) n += second_[i].ids.size();
  for (const std::vector<Encoding>& column : negatives_) n += column[i].ids.size();
  return static_cast<int64_t>(n);
}

ExampleLengths TaskData::Lengths() const {
  ExampleLengths out;
  for (const Encoding& e : first_) out.first.push_back(static_cast<int64_t>(e.ids.size()));
  for (const Encoding& e : second_) out.second.push_back(static_cast<int64_t>(e.ids.size()));
  for (const std::vector<Encoding>& column : negatives_) {
    for (size_t i = 0; i < column.size(); ++i) {
      out.second[i] = std::max(out.second[i], static_cast<int64_t>(column[i].ids.size()));
    }
  }
  return out;
}

std::vector<uint64_t> TaskData::TextKeys(int64_t i) const {
  auto key = [](const Encoding& e) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
    for (const int32_t id : e.ids) {
      const uint32_t u = static_cast<uint32_t>(id);
      for (int shift = 0; shift < 32; shift += 8) {
        h ^= (u >> shift) & 0xFF;
        h *= 0x100000001b3ULL;  // FNV-1a 64 prime
      }
    }
    return h;
  };
  std::vector<uint64_t> out;
  out.push_back(key(first_[i]));
  if (!second_.empty()) out.push_back(key(second_[i]));
  for (const std::vector<Encoding>& column : negatives_) out.push_back(key(column[i]));
  return out;
}

TaskBatch TaskData::Batch(const std::vector<int64_t>& indices, int64_t pad_multiple,
                          PadLengths pad) const {
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
    b.negatives.push_back(PadTexts(texts, pad_id_, pad_multiple, pad.second));
  }
  if (kind_.target == RowTarget::kScore || kind_.target == RowTarget::kBinaryLabel) {
    b.scores = torch::tensor(scores, torch::kFloat);
  }
  if (!labels.empty()) b.labels = torch::tensor(labels, torch::kLong);
  return b;
}

}  // namespace trainer
}  // namespace tunefleet
