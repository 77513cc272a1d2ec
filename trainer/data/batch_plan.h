// Which examples each rank trains on in an epoch, and the length every rank pads each batch to.
//
// Under data parallelism every rank of a step waits for the slowest at the gradient
// all-reduce, so a rank whose batch holds a long sentence holds up all of them; with CUDA
// graphs a batch shape new to one rank is a capture that all the others wait for. The plan
// makes every rank's micro-batch of a step pad to the same length, decided identically on
// every rank from the seed and the data alone (no communication):
//
//   1. The epoch's order: EpochOrder(n, seed, epoch, shuffle), padded with its own first
//      elements to N = world * shard (shard = ceil(n / world)), as DistributedSampler does.
//   2. Global batches: positions [k * G, (k + 1) * G) of that order, G = world * batch_size;
//      there are ceil(shard / batch_size) of them and the last holds world * last examples
//      (last = shard - (batches - 1) * batch_size), so each rank's batches are train.batch_size
//      examples but the last, as without the plan (trainer/train/train_loop.h's step rule).
//   3. train.group_by_length (on shuffled epochs only, as Hugging Face's group_by_length):
//      the order is cut into megabatches of m global batches, m = clamp(n / (4 * G), 8, 50)
//      (transformers' get_length_grouped_indices with the global batch, whose floor is 1: with
//      a large global batch, say 4 x 128 on STS-B's 5,749 pairs, it makes megabatches of 2
//      batches that group nothing, and the 4 ranks then padded 78% more tokens an epoch than
//      one; with 8 they pad 27% more: batch_plan_stsb_test), each sorted by length, longest
//      first (stable); then the full global batch holding the epoch's longest example swaps
//      places with the first, so that a run that runs out of memory does so at once. Each
//      global batch then holds examples of about the same length.
//   4. Rank r takes every world-th example of each global batch from position r (the
//      interleaving of DistributedSampler), so rank r's batch k is its share of global batch k.
//      With `no_duplicates` (train.batch_sampler: no_duplicates) step 3 is skipped (as
//      sentence-transformers, whose NoDuplicatesBatchSampler does not group by length either)
//      and each rank's share is regrouped by NoDuplicateOrder (trainer/data/no_duplicates.h) so
//      that no text is twice in one of its batches; every rank regroups every rank's share (the
//      same on all), so that step 5 still sees each step's global batch.
//   5. Each global batch's pad length, the same on every rank: the longest text of the global
//      batch, per side of a pair (first texts, second texts), rounded up to `pad_multiple`;
//      with `buckets` (CUDA graphs: one graph per shape), the longer side's length rounded up
//      to the next bucket, for both sides, and the short last batch of an epoch to the bucket
//      of the data's longest text, so every epoch's last batch is one shape.
// Lengths are an example's tokens per text as the model sees them (truncated, with special
// tokens).
// Thread-safety: pure functions.
#ifndef TUNEFLEET_TRAINER_DATA_BATCH_PLAN_H_
#define TUNEFLEET_TRAINER_DATA_BATCH_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/data/no_duplicates.h"

namespace tunefleet {
namespace trainer {

// The lengths one batch's texts are padded to on every rank (second: 0 for one-text tasks).
struct PadLengths {
  int64_t first = 0;
  int64_t second = 0;
  bool operator==(const PadLengths& o) const { return first == o.first && second == o.second; }
};

struct BatchPlanOptions {
  int64_t batch_size = 32;  // per rank
  int rank = 0;
  int world = 1;
  uint64_t seed = 42;
  bool shuffle = true;
  bool group_by_length = true;
  int64_t pad_multiple = 1;
  // Ascending pad lengths for CUDA graphs (GraphBuckets); empty: lengths are only rounded up to
  // pad_multiple.
  std::vector<int64_t> buckets;
  // train.batch_sampler: no_duplicates, by `text_keys` (an example's texts as keys; unset: no
  // example has a duplicate). group_by_length is then not applied.
  bool no_duplicates = false;
  TextKeysFn text_keys;
};

// Per example: its first and second text's lengths (second empty for one-text tasks; with hard
// negatives, the longest of the second text and the negatives, which pad alike).
struct ExampleLengths {
  std::vector<int64_t> first;
  std::vector<int64_t> second;
  int64_t size() const { return static_cast<int64_t>(first.size()); }
};

struct EpochPlan {
  std::vector<int64_t> order;    // this rank's examples in visiting order: shard of them
  std::vector<PadLengths> pads;  // per batch of batch_size in `order` (the last may be shorter)
  // no_duplicates: the examples of the epoch, on all ranks together, that sit in a batch
  // already holding one of their texts (the batches NoDuplicateOrder could not fill otherwise).
  int64_t unresolved = 0;
};

EpochPlan PlanEpoch(const ExampleLengths& lengths, int64_t epoch, const BatchPlanOptions& options);

// The pad lengths for CUDA graphs: `explicit_buckets` when given (ascending, checked by the
// config), else the powers of two 16 ... 512 (on 4 H200s and STS-B they trained as fast as
// 16, 32, 48, 64, 96, 128, ... with one graph fewer: docs/BENCHMARKS.md, issue 31); each rounded
// up to pad_multiple, those above max_len dropped and max_len (rounded up) last, so no text
// pads past it.
std::vector<int64_t> GraphBuckets(int64_t max_len, int64_t pad_multiple,
                                  const std::vector<int64_t>& explicit_buckets = {});

// What the plan does, in one line (the trainer's `batches` line), for n examples: "grouped by
// length (megabatches of 11 batches of 128, longest first); every rank pads a step's batch to
// one length; lengths padded up to 16, 32, 64, 128 (train.length_buckets)". With no_duplicates
// it starts "no_duplicates (no text twice in a rank's batch); shuffled, not grouped by length",
// or with `default_for` (the loss that made it the default) "no_duplicates (the default for
// MultipleNegativesRankingLoss: no text twice in a rank's batch); ...".
std::string DescribeBatchPlan(const BatchPlanOptions& options, int64_t n,
                              const std::string& default_for = "");

// The smallest bucket >= length (the last bucket when none is).
int64_t BucketOf(int64_t length, const std::vector<int64_t>& buckets);

// Megabatch size in global batches for n examples and global batch g (step 3 above).
int64_t MegabatchBatches(int64_t n, int64_t global_batch);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_BATCH_PLAN_H_
