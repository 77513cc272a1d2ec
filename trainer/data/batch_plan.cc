#include "trainer/data/batch_plan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "trainer/data/datasets.h"

namespace tunefleet {
namespace trainer {
namespace {

int64_t RoundUp(int64_t v, int64_t multiple) {
  return multiple > 1 ? (v + multiple - 1) / multiple * multiple : v;
}

// The length grouping sorts by: the longer text of the example.
int64_t LongerText(const ExampleLengths& l, int64_t i) {
  return l.second.empty() ? l.first[i] : std::max(l.first[i], l.second[i]);
}

// Step 3 of the header: megabatches sorted longest first, then the longest full global batch
// first. `order` holds `full` full global batches of `g` examples, then the short one.
void GroupByLength(const ExampleLengths& lengths, int64_t g, int64_t full,
                   std::vector<int64_t>& order) {
  const int64_t n = static_cast<int64_t>(order.size());
  const int64_t mega = MegabatchBatches(lengths.size(), g) * g;
  const auto longer = [&](int64_t a, int64_t b) {
    return LongerText(lengths, a) > LongerText(lengths, b);
  };
  for (int64_t begin = 0; begin < n; begin += mega) {
    std::stable_sort(order.begin() + begin, order.begin() + std::min(n, begin + mega), longer);
  }
  if (full < 2) return;
  int64_t longest = 0;  // the full batch holding the longest example (the first of its batch)
  for (int64_t k = 1; k < full; ++k) {
    if (LongerText(lengths, order[k * g]) > LongerText(lengths, order[longest * g])) longest = k;
  }
  if (longest != 0) {
    std::swap_ranges(order.begin(), order.begin() + g, order.begin() + longest * g);
  }
}

}  // namespace

int64_t MegabatchBatches(int64_t n, int64_t global_batch) {
  return std::clamp<int64_t>(n / (4 * std::max<int64_t>(global_batch, 1)), 8, 50);
}

std::vector<int64_t> GraphBuckets(int64_t max_len, int64_t pad_multiple,
                                  const std::vector<int64_t>& explicit_buckets) {
  static const std::vector<int64_t> kDefault = {16, 32, 64, 128, 256, 512};
  const std::vector<int64_t>& from = explicit_buckets.empty() ? kDefault : explicit_buckets;
  const int64_t top = RoundUp(max_len, pad_multiple);
  std::vector<int64_t> out;
  for (int64_t b : from) {
    b = RoundUp(b, pad_multiple);
    if (b >= top) break;
    if (out.empty() || b > out.back()) out.push_back(b);
  }
  out.push_back(top);
  return out;
}

std::string DescribeBatchPlan(const BatchPlanOptions& o, int64_t n,
                              const std::string& default_for) {
  const int64_t g = o.batch_size * std::max(o.world, 1);
  std::string line;
  if (o.no_duplicates) {
    line =
        absl::StrCat("no_duplicates (",
                     default_for.empty() ? "" : absl::StrCat("the default for ", default_for, ": "),
                     "no text twice in a rank's batch); ",
                     o.shuffle ? "shuffled, not grouped by length" : "in file order");
  } else {
    line =
        !o.shuffle ? "in file order"
        : o.group_by_length
            ? absl::StrFormat("grouped by length (megabatches of %d batches of %d, longest first)",
                              MegabatchBatches(n, g), g)
            : "shuffled (train.group_by_length: false)";
  }
  if (o.world > 1) absl::StrAppend(&line, "; every rank pads a step's batch to one length");
  if (!o.buckets.empty()) {
    absl::StrAppend(&line, "; lengths padded up to ", absl::StrJoin(o.buckets, ", "),
                    " (train.length_buckets)");
  }
  return line;
}

int64_t BucketOf(int64_t length, const std::vector<int64_t>& buckets) {
  auto it = std::lower_bound(buckets.begin(), buckets.end(), length);
  return it == buckets.end() ? buckets.back() : *it;
}

EpochPlan PlanEpoch(const ExampleLengths& lengths, int64_t epoch, const BatchPlanOptions& o) {
  EpochPlan plan;
  const int64_t n = lengths.size();
  if (n <= 0) return plan;
  const int64_t world = std::max(o.world, 1), b = std::max<int64_t>(o.batch_size, 1);
  const int64_t shard = (n + world - 1) / world;
  const int64_t batches = (shard + b - 1) / b;
  const int64_t g = world * b;

  // Steps 1-3: the global order, padded to world * shard.
  const std::vector<int64_t> epoch_order = EpochOrder(n, o.seed, epoch, o.shuffle);
  std::vector<int64_t> order(static_cast<size_t>(world * shard));
  for (size_t i = 0; i < order.size(); ++i) order[i] = epoch_order[i % static_cast<size_t>(n)];
  if (o.no_duplicates) {
    // Every rank's share regrouped, written back in place (rank r's i-th example sits at
    // i * world + r), so that the pads below see each step's global batch.
    for (int r = 0; r < world; ++r) {
      NoDuplicatesResult regrouped =
          NoDuplicateOrder(RankShard(order, r, static_cast<int>(world)), b, o.text_keys);
      plan.unresolved += regrouped.unresolved;
      for (int64_t i = 0; i < shard; ++i) order[i * world + r] = regrouped.order[i];
    }
  } else if (o.shuffle && o.group_by_length) {
    GroupByLength(lengths, g, shard / b, order);
  }

  int64_t longest = 0;  // for the short last batch under buckets
  if (!o.buckets.empty()) {
    for (int64_t i = 0; i < n; ++i) longest = std::max(longest, LongerText(lengths, i));
  }
  // Step 4: order's length is a multiple of world, so DistributedSampler's share of it is
  // rank r's part of every global batch.
  plan.order = RankShard(order, o.rank, static_cast<int>(world));
  // Step 5.
  plan.pads.reserve(static_cast<size_t>(batches));
  for (int64_t k = 0; k < batches; ++k) {
    const int64_t begin = k * g, end = std::min<int64_t>(begin + g, world * shard);
    PadLengths pad;
    for (int64_t p = begin; p < end; ++p) {
      const int64_t e = order[p];
      pad.first = std::max(pad.first, lengths.first[e]);
      if (!lengths.second.empty()) pad.second = std::max(pad.second, lengths.second[e]);
    }
    if (o.buckets.empty()) {
      pad.first = RoundUp(pad.first, o.pad_multiple);
      pad.second = RoundUp(pad.second, o.pad_multiple);
    } else {
      const bool short_last = end - begin < g;
      const int64_t l = BucketOf(short_last ? longest : std::max(pad.first, pad.second), o.buckets);
      pad.first = l;
      pad.second = lengths.second.empty() ? 0 : l;
    }
    plan.pads.push_back(pad);
  }
  return plan;
}

}  // namespace trainer
}  // namespace tunefleet
