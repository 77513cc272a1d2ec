// trainer/data/no_duplicates.h: sentence-transformers' NoDuplicatesBatchSampler as a
// permutation of a rank's order: the greedy fill, the tail filled anyway and counted, and its
// speed on a large epoch.
#include "trainer/data/no_duplicates.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

using Keys = std::vector<std::vector<uint64_t>>;

TextKeysFn FromTable(const Keys& keys) {
  return [&keys](int64_t i) { return keys[static_cast<size_t>(i)]; };
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// The sampler's loop as sentence-transformers writes it (quadratic), with this trainer's tail
// rule: a batch the walk cannot fill takes the first examples left, counted.
NoDuplicatesResult Reference(const std::vector<int64_t>& order, int64_t b, const Keys& keys) {
  NoDuplicatesResult r;
  std::vector<int64_t> remaining = order;
  while (!remaining.empty()) {
    std::set<uint64_t> values;
    std::vector<size_t> batch;
    for (size_t i = 0; i < remaining.size() && static_cast<int64_t>(batch.size()) < b; ++i) {
      const std::vector<uint64_t>& k = keys[static_cast<size_t>(remaining[i])];
      if (std::any_of(k.begin(), k.end(), [&](uint64_t v) { return values.count(v) > 0; })) {
        continue;
      }
      batch.push_back(i);
      values.insert(k.begin(), k.end());
    }
    std::vector<bool> taken(remaining.size(), false);
    for (size_t i : batch) taken[i] = true;
    for (size_t i = 0; i < remaining.size() && static_cast<int64_t>(batch.size()) < b; ++i) {
      if (taken[i]) continue;
      taken[i] = true;
      batch.push_back(i);
      ++r.unresolved;
    }
    std::vector<int64_t> rest;
    for (size_t i : batch) r.order.push_back(remaining[i]);
    for (size_t i = 0; i < remaining.size(); ++i) {
      if (!taken[i]) rest.push_back(remaining[i]);
    }
    remaining = std::move(rest);
  }
  return r;
}

// Examples of each batch that share a text with an earlier example of it.
int64_t Duplicates(const std::vector<int64_t>& order, int64_t b, const Keys& keys) {
  int64_t count = 0;
  for (size_t begin = 0; begin < order.size(); begin += static_cast<size_t>(b)) {
    std::set<uint64_t> seen;
    for (size_t i = begin; i < std::min(order.size(), begin + static_cast<size_t>(b)); ++i) {
      const std::vector<uint64_t>& k = keys[static_cast<size_t>(order[i])];
      if (std::any_of(k.begin(), k.end(), [&](uint64_t v) { return seen.count(v) > 0; })) {
        ++count;
      }
      seen.insert(k.begin(), k.end());
    }
  }
  return count;
}

bool IsPermutation(std::vector<int64_t> a, std::vector<int64_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

uint64_t Next(uint64_t& x) {
  x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x >> 33;
}

// n pairs: the anchor one of `anchors` texts (many repeat), the positive its own text, and with
// `hot` percent of them the positive "Yes" (key 1).
Keys Pairs(int64_t n, uint64_t anchors, int hot, uint64_t seed) {
  Keys keys(static_cast<size_t>(n));
  uint64_t x = seed;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t positive = static_cast<int>(Next(x) % 100) < hot ? 1 : 1000000000 + i;
    keys[static_cast<size_t>(i)] = {10 + Next(x) % anchors, positive};
  }
  return keys;
}

TEST(NoDuplicatesTest, WithoutDuplicatesTheOrderIsUnchanged) {
  Keys keys;
  for (uint64_t i = 0; i < 100; ++i) keys.push_back({2 * i, 2 * i + 1});
  std::vector<int64_t> order = Iota(100);
  std::reverse(order.begin(), order.begin() + 37);
  const NoDuplicatesResult r = NoDuplicateOrder(order, 8, FromTable(keys));
  EXPECT_EQ(r.order, order);
  EXPECT_EQ(r.unresolved, 0);
}

TEST(NoDuplicatesTest, TextsRepeatedWithinOneExampleAreNoDuplicate) {
  const Keys keys = {{5, 5}, {6, 7, 6}, {8, 9}};
  const NoDuplicatesResult r = NoDuplicateOrder(Iota(3), 3, FromTable(keys));
  EXPECT_EQ(r.order, Iota(3));
  EXPECT_EQ(r.unresolved, 0);
}

TEST(NoDuplicatesTest, DuplicatesWaitForTheNextBatch) {
  Keys keys;  // examples 2k and 2k + 1 share their anchor
  for (uint64_t i = 0; i < 16; ++i) keys.push_back({i / 2, 100 + i});
  const NoDuplicatesResult r = NoDuplicateOrder(Iota(16), 4, FromTable(keys));
  EXPECT_EQ(r.order, (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}));
  EXPECT_EQ(r.unresolved, 0);
  EXPECT_EQ(Duplicates(r.order, 4, keys), 0);
}

TEST(NoDuplicatesTest, TheTailIsFilledAnywayAndCounted) {
  // Examples 6, 7, 8 share a text: the second batch takes 4, 5, 6 and then 7 anyway; 8 is the
  // last batch alone.
  Keys keys;
  for (uint64_t i = 0; i < 9; ++i) keys.push_back({i < 6 ? i : 6, 100 + i});
  NoDuplicatesResult r = NoDuplicateOrder(Iota(9), 4, FromTable(keys));
  EXPECT_EQ(r.order, Iota(9));
  EXPECT_EQ(r.unresolved, 1);
  EXPECT_EQ(Duplicates(r.order, 4, keys), 1);

  // One text in every example: every batch but its first example is unresolved; the batch
  // count is kept (10 examples in batches of 4: 3 batches).
  keys.assign(10, {7});
  r = NoDuplicateOrder(Iota(10), 4, FromTable(keys));
  EXPECT_EQ(r.order, Iota(10));
  EXPECT_EQ(r.unresolved, 3 + 3 + 1);
}

TEST(NoDuplicatesTest, MatchesSentenceTransformersGreedyWalk) {
  uint64_t x = 99;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(Next(x) % 120);
    const int64_t b = 2 + static_cast<int64_t>(Next(x) % 9);
    const uint64_t texts = 2 + Next(x) % 60;  // few texts: many duplicates
    const int per_example = 1 + static_cast<int>(Next(x) % 3);
    Keys keys(static_cast<size_t>(n));
    for (auto& k : keys) {
      for (int t = 0; t < per_example; ++t) k.push_back(Next(x) % texts);
    }
    std::vector<int64_t> order = Iota(n);
    for (int64_t i = n - 1; i > 0; --i) {
      std::swap(order[static_cast<size_t>(i)],
                order[static_cast<size_t>(Next(x) % static_cast<uint64_t>(i + 1))]);
    }
    const NoDuplicatesResult got = NoDuplicateOrder(order, b, FromTable(keys));
    const NoDuplicatesResult want = Reference(order, b, keys);
    ASSERT_EQ(got.order, want.order) << "trial " << trial << " n " << n << " b " << b;
    EXPECT_EQ(got.unresolved, want.unresolved) << "trial " << trial;
    EXPECT_TRUE(IsPermutation(got.order, order));
    EXPECT_EQ(Duplicates(got.order, b, keys), got.unresolved) << "trial " << trial;
  }
}

TEST(NoDuplicatesTest, LargeEpochsAreFast) {
  const int64_t n = 200000, b = 64;
  // Anchors repeated about twice (as NLI triplets), then a "Yes" in 30% of the examples.
  for (int hot : {0, 30}) {
    const Keys keys = Pairs(n, 100000, hot, 5 + hot);
    const auto start = std::chrono::steady_clock::now();
    const NoDuplicatesResult r = NoDuplicateOrder(Iota(n), b, FromTable(keys));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 2.0) << "hot " << hot;
    ASSERT_EQ(static_cast<int64_t>(r.order.size()), n);
    EXPECT_TRUE(IsPermutation(r.order, Iota(n)));
    EXPECT_EQ(Duplicates(r.order, b, keys), r.unresolved);
    if (hot == 0) {
      EXPECT_EQ(r.unresolved, 0);
    } else {
      // One "Yes" a batch: the 30% left over pile up and end in batches full of them.
      EXPECT_GT(r.unresolved, 0);
    }
    std::printf("n %lld, batch %lld, %d%% \"Yes\": %.3f s, %lld unresolved\n",
                static_cast<long long>(n), static_cast<long long>(b), hot, seconds,
                static_cast<long long>(r.unresolved));
  }
  // One text in every example: no batch can be resolved, and it stays linear.
  const Keys same(static_cast<size_t>(n), std::vector<uint64_t>{3});
  const auto start = std::chrono::steady_clock::now();
  const NoDuplicatesResult r = NoDuplicateOrder(Iota(n), b, FromTable(same));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_EQ(r.order, Iota(n));
  EXPECT_EQ(r.unresolved, n - (n + b - 1) / b);
}

TEST(NoDuplicatesTest, CachedKeysAreTheKeys) {
  int calls = 0;
  const TextKeysFn cached = CacheTextKeys(4, [&calls](int64_t i) {
    ++calls;
    return std::vector<uint64_t>(static_cast<size_t>(i), static_cast<uint64_t>(10 + i));
  });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(cached(0), std::vector<uint64_t>{});
  EXPECT_EQ(cached(3), (std::vector<uint64_t>{13, 13, 13}));
  EXPECT_EQ(cached(1), std::vector<uint64_t>{11});
  EXPECT_EQ(calls, 4);
}

TEST(NoDuplicatesTest, DefaultSampler) {
  EXPECT_EQ(ResolveBatchSampler("", true), "no_duplicates");
  EXPECT_EQ(ResolveBatchSampler("", false), "default");
  EXPECT_EQ(ResolveBatchSampler("default", true), "default");
  EXPECT_EQ(ResolveBatchSampler("no_duplicates", false), "no_duplicates");
  // Batches of one: nothing to do.
  const Keys keys(5, std::vector<uint64_t>{1});
  EXPECT_EQ(NoDuplicateOrder(Iota(5), 1, FromTable(keys)).order, Iota(5));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
