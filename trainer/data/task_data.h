// A task's examples, tokenized once, and the tensors of a batch of them.
//
// A task (trainer/tasks/task.h) names its data kind: what each example must carry and how it is
// batched. The kinds:
//   kScore          a, b, score: the score / max_score (5 for stsb and sick, whose scores run to
//                   5; 1 for jsonl, csv and tsv, whose scores must lie in [0, 1]); batches carry
//                   scores
//   kPositivePairs  a (anchor), b (positive) and any hard negatives (the same number on every
//                   row: one TextBatch each); rows with label 0 (a non-paraphrase) are dropped
//   kLabel          a, b, an integer label; batches carry labels
//   kBinaryLabel    a, b, a label 0 or 1; batches carry it as labels and as scores (so that the
//                   similarity evaluation can rank by it)
//   kMargin         a, b, negatives and a teacher's margin (MarginMSELoss): the label column's
//                   number (one negative), a list of one margin per negative, or a list of
//                   scores [positive, negative...] (margins positive - negative); batches carry
//                   targets [B, negatives], any real numbers
//   kVector         a and a list of numbers (a teacher's embedding, MSELoss); batches carry
//                   targets [B, D]
//   kList           a query, a list of documents and one relevance each (LambdaLoss,
//                   ListNetLoss): every (query, document) as one text; batches carry the pairs
//                   row by row in `first`, group_sizes and targets [B, most documents] padded
//                   with -inf
// kPositivePairs and kMargin take negatives: other kinds refuse rows with more than 2 texts.
// With joint_pair the pair is one text, [CLS] a [SEP] b [SEP] with token types, and so is each
// (a, negative); else a and b are two texts. pair_grid (kPositivePairs, a cross-encoder's
// in-batch negatives): a batch's `first` holds, for each row i in turn, (a_i, b_i), then
// (a_i, c) for every text c of the other rows' b and negatives (or grid_negatives of them drawn
// at random, seeded by the batch's indices), then (a_i, each of its own negatives); group_sizes
// says how many each row has. Evaluation data (task.eval) is read with the task's evaluation
// data kind.
// Thread-safety: immutable after Make(); Batch() may run concurrently.
#ifndef TUNEFLEET_TRAINER_DATA_TASK_DATA_H_
#define TUNEFLEET_TRAINER_DATA_TASK_DATA_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/data/batch_plan.h"
#include "trainer/data/datasets.h"
#include "trainer/data/tokenizer.h"

namespace tunefleet {
namespace trainer {

enum class RowTarget { kScore, kPositivePairs, kLabel, kBinaryLabel, kMargin, kVector, kList };

struct DataKind {
  std::string task;  // the task type, for errors ("which task type sts needs")
  RowTarget target = RowTarget::kScore;
  bool joint_pair = false;     // a and b as one text
  bool pair_grid = false;      // joint pairs of each anchor with the batch's candidates
  int64_t grid_negatives = 0;  // pair_grid: other rows' texts per anchor (0: all of them)
  // Texts an example is encoded as (1 joint pair, else 2).
  int64_t texts() const { return joint_pair ? 1 : 2; }
};

// Token ids of a batch of texts, padded to the longest: int64 [B, T] each.
struct TextBatch {
  torch::Tensor input_ids, token_type_ids, attention_mask;
  bool padded = true;  // some row is shorter than the longest (false: the mask is all ones)
  // The tokens of a prompt each row starts with (after the first special token) that pooling
  // leaves out (model.include_prompt: false, as sentence-transformers' Pooling with
  // prompt_length): the first prompt_length columns of the mask; 0: none.
  int64_t prompt_length = 0;
  TextBatch To(const torch::Device& device) const;
  int64_t tokens() const { return input_ids.defined() ? input_ids.numel() : 0; }
};

struct TaskBatch {
  int64_t size = 0;
  TextBatch first;   // a, or the joint pair
  TextBatch second;  // b; undefined for a joint pair
  // One per negative column (Example::negatives), in column order; empty without negatives.
  std::vector<TextBatch> negatives;
  torch::Tensor scores;   // float32 [B] in [0, 1] (kScore, kBinaryLabel)
  torch::Tensor labels;   // int64 [B] (kLabel, kBinaryLabel)
  torch::Tensor targets;  // float32: [B, N] (kMargin), [B, D] (kVector), [B, L] (kList)
  // kList and pair_grid: how many of `first`'s rows belong to each example, in order.
  std::vector<int64_t> group_sizes;
  TaskBatch To(const torch::Device& device) const;  // a copy on `device` (either way)
};

// `encodings` as one text batch on the CPU, padded to the longest, rounded up to a multiple of
// `multiple`, and to at least `min_cols` tokens.
TextBatch PadTexts(const std::vector<Encoding>& encodings, int32_t pad_id, int64_t multiple = 1,
                   int64_t min_cols = 0);

class TaskData {
 public:
  // `source` names the data in errors (the file). `format` is the file's format, which sets
  // the score scale. Errors: no usable example, an example without the score or label the
  // task needs (naming its index), a score or binary label out of range, negatives for a kind
  // other than kPositivePairs ("SOURCE: row N has 3 text columns; task type sts takes 2 ..."),
  // rows with different numbers of negatives.
  static absl::StatusOr<TaskData> Make(const DataKind& kind, const std::vector<Example>& examples,
                                       const std::string& format, const Tokenizer& tokenizer,
                                       int64_t max_len, const std::string& source);

  const DataKind& kind() const { return kind_; }
  int64_t size() const { return static_cast<int64_t>(scores_.size()); }
  // 1 + the largest label (0 when there are no labels).
  int64_t num_labels() const { return num_labels_; }
  const std::string& source() const { return source_; }

  // Hard negatives an example has (the same for every example; 0 but for kPositivePairs).
  int64_t num_negatives() const { return static_cast<int64_t>(negatives_.size()); }

  // Tokens of example i (all its texts), for batching by length.
  int64_t tokens(int64_t i) const;

  // Each example's text lengths in tokens (trainer/data/batch_plan.h plans batches by them);
  // `second` is the longest of b and the negatives, which are padded like b.
  ExampleLengths Lengths() const;

  // One key per text of example i, as it is encoded: the first text (a, or the joint pair), b,
  // then each negative. Equal token ids give equal keys: the 64-bit FNV-1a hash of the ids as
  // 4-byte little-endian integers, the same in every process and on every platform (for
  // samplers that keep duplicates out of a batch on every rank alike).
  std::vector<uint64_t> TextKeys(int64_t i) const;

  // The examples at `indices`, in that order, on the CPU; each text batch padded to its longest,
  // rounded up to a multiple of `pad_multiple`, and to at least `pad`'s length for it (the
  // first texts to pad.first, the second and each negative column to pad.second).
  TaskBatch Batch(const std::vector<int64_t>& indices, int64_t pad_multiple = 1,
                  PadLengths pad = {}) const;

  // The prompt_length (TextBatch) of each text column's batches, in column order (the first
  // text, b, each negative); missing entries are 0. Set before the data is shared.
  void set_prompt_lengths(std::vector<int64_t> lengths) { prompt_lengths_ = std::move(lengths); }

 private:
  DataKind kind_;
  std::string source_;
  int32_t pad_id_ = 0;
  std::vector<Encoding> first_, second_;
  std::vector<std::vector<Encoding>> negatives_;  // [negative column][example]
  std::vector<float> scores_;
  std::vector<int64_t> labels_;
  int64_t num_labels_ = 0;
  std::vector<int64_t> prompt_lengths_;
  std::vector<std::vector<float>> targets_;   // kMargin, kVector, kList: per example
  std::vector<std::vector<Encoding>> lists_;  // kList: each (query, document) pair
  // pair_grid: the ids of each text column (a, b, negatives) without special tokens.
  std::vector<std::vector<std::vector<int32_t>>> grid_;
  SpecialTemplate template_;
  int64_t max_len_ = 0;
  absl::Status AddTarget(const Example& e, size_t i, const std::string& format, bool* keep);
  absl::Status AddTeacherTarget(const Example& e, size_t i);
  void AddTexts(const Example& e, const Tokenizer& tokenizer, int64_t max_len);
  TaskBatch GridBatch(const std::vector<int64_t>& indices, int64_t pad_multiple,
                      PadLengths pad) const;
  TaskBatch ListBatch(const std::vector<int64_t>& indices, int64_t pad_multiple,
                      PadLengths pad) const;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_TASK_DATA_H_
