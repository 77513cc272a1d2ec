// train.batch_sampler: no_duplicates — batches in which no text appears twice, as
// sentence-transformers' NoDuplicatesBatchSampler makes them for losses that take the other
// examples of a batch as negatives (MultipleNegativesRankingLoss and its cached form): a text
// twice in a batch is a false negative, its copy scored as a wrong answer.
//
// NoDuplicateOrder reorders one rank's epoch order as that sampler does: walking the examples
// not yet placed, in order, it adds an example to the current batch when none of its texts is
// in the batch yet and leaves it for a later batch otherwise; a full batch is yielded and the
// next starts again from the first example not yet placed. Unlike sentence-transformers, which
// then yields a short batch, a batch that the remaining examples cannot fill without a duplicate
// (the epoch's tail, or a text in very many examples) is filled with the first remaining
// examples anyway, counted in `unresolved`: the result is a permutation of the order, so every
// rank keeps its number of batches, and steps stay in lockstep under data parallelism. An order
// without duplicates comes back unchanged.
//
// Cost: examples left for later wait in per-text queues, so a batch that already holds a text
// skips all the examples with that text at once (one very common text, say the empty string
// or "Yes" as half of the answers, does not make every batch rescan them); in practice about
// linear in the examples (200k examples in batches of 64: tests/trainer/no_duplicates_test).
// Thread-safety: pure function.
#ifndef TUNEFLEET_TRAINER_DATA_NO_DUPLICATES_H_
#define TUNEFLEET_TRAINER_DATA_NO_DUPLICATES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

// An example's texts as keys (one per text; equal texts, equal keys). Keys repeated within one
// example do not make it a duplicate of itself.
using TextKeysFn = std::function<std::vector<uint64_t>(int64_t example)>;

struct NoDuplicatesResult {
  std::vector<int64_t> order;  // a permutation of the input order
  // Examples placed in a batch that already held one of their texts (the batches the
  // remaining examples could not fill otherwise).
  int64_t unresolved = 0;
};

// `order` (example indices, as text_keys takes them) regrouped into batches of `batch_size`
// (the last one shorter) without a text twice in a batch, as far as the greedy fill allows.
NoDuplicatesResult NoDuplicateOrder(const std::vector<int64_t>& order, int64_t batch_size,
                                    const TextKeysFn& text_keys);

// `text_keys` of examples 0 .. n - 1 computed once and kept (a plan asks for every example's
// keys each epoch).
TextKeysFn CacheTextKeys(int64_t n, const TextKeysFn& text_keys);

// train.batch_sampler as a run uses it: "default" or "no_duplicates"; unset ("") is
// no_duplicates for a loss with in-batch negatives, else default.
std::string ResolveBatchSampler(const std::string& configured, bool in_batch_negatives);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_NO_DUPLICATES_H_
