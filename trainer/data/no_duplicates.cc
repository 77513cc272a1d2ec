#include "trainer/data/no_duplicates.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace tunefleet {
namespace trainer {
namespace {

// The greedy fill of the header. Positions are indices into the input order; an example's texts
// are interned as dense key ids. Examples not yet placed are either past `cursor` (never looked
// at) or parked in the queue of a text that kept them out of an earlier batch (a min-heap of
// positions per key, so every parked position is before the cursor). `heap_` holds the head of
// every non-empty queue whose key the current batch does not hold; a batch takes the smallest of
// that and the cursor, so examples are looked at in order, and a queue whose key the batch holds
// is passed over whole (its examples all have the text). An entry is live while it is its
// queue's head and `queued_` says so; others are stale and dropped when they surface.
class Filler {
 public:
  Filler(const std::vector<int64_t>& order, int64_t batch_size, const TextKeysFn& text_keys)
      : order_(order), b_(batch_size), m_(static_cast<int64_t>(order.size())) {
    std::vector<uint64_t> texts;  // every example's keys, then interned as dense ids
    begin_.reserve(static_cast<size_t>(m_) + 1);
    begin_.push_back(0);
    for (int64_t p = 0; p < m_; ++p) {
      for (const uint64_t key : text_keys(order[static_cast<size_t>(p)])) texts.push_back(key);
      begin_.push_back(static_cast<int64_t>(texts.size()));
    }
    const int32_t k = Intern(texts);
    in_batch_.assign(static_cast<size_t>(k), -1);
    held_.assign(static_cast<size_t>(k), -1);
    queued_.assign(static_cast<size_t>(k), -1);
    parked_.resize(static_cast<size_t>(k));
  }

  NoDuplicatesResult Run() {
    NoDuplicatesResult r;
    r.order.reserve(static_cast<size_t>(m_));
    for (int64_t batch = 0; placed_ < m_; ++batch) {
      batch_ = batch;
      picks_ = 0;
      FillGreedily(r.order);
      if (picks_ < b_ && placed_ < m_) r.unresolved += FillAnyway(r.order);
      for (const int32_t k : held_list_) Requeue(k);
      held_list_.clear();
      if (picks_ == 0) break;  // cannot happen: every example left is at the cursor or queued
    }
    return r;
  }

 private:
  using Entry = std::pair<int64_t, int32_t>;  // (position, key): a queue's head

  // keys_ from `texts`: each key as a dense id, a key repeated within an example kept once.
  // Returns the number of distinct keys.
  int32_t Intern(const std::vector<uint64_t>& texts) {
    absl::flat_hash_map<uint64_t, int32_t> ids;
    ids.reserve(texts.size());
    keys_.reserve(texts.size());
    size_t t = 0;
    for (int64_t p = 0; p < m_; ++p) {
      const size_t first = keys_.size();
      for (; t < static_cast<size_t>(begin_[p + 1]); ++t) {
        const int32_t id =
            ids.try_emplace(texts[t], static_cast<int32_t>(ids.size())).first->second;
        bool repeated = false;
        for (size_t i = first; i < keys_.size(); ++i) repeated = repeated || keys_[i] == id;
        if (!repeated) keys_.push_back(id);
      }
      begin_[p + 1] = static_cast<int64_t>(keys_.size());
    }
    return static_cast<int32_t>(ids.size());
  }

  // The first key of position p that the batch holds, or -1.
  int32_t Conflict(int64_t p) const {
    for (int64_t i = begin_[p]; i < begin_[p + 1]; ++i) {
      if (in_batch_[keys_[i]] == batch_) return keys_[i];
    }
    return -1;
  }
  void Take(int64_t p, std::vector<int64_t>& out) {
    out.push_back(order_[static_cast<size_t>(p)]);
    for (int64_t i = begin_[p]; i < begin_[p + 1]; ++i) in_batch_[keys_[i]] = batch_;
    ++picks_;
    ++placed_;
  }
  // Key k's queue is passed over for the rest of the batch; its head is queued again after it.
  void Hold(int32_t k) {
    if (held_[k] == batch_) return;
    held_[k] = batch_;
    held_list_.push_back(k);
  }
  void Park(int64_t p, int32_t k) {
    std::vector<int64_t>& q = parked_[k];
    q.push_back(p);
    std::push_heap(q.begin(), q.end(), std::greater<>());
  }
  int64_t Unpark(int32_t k) {
    std::vector<int64_t>& q = parked_[k];
    std::pop_heap(q.begin(), q.end(), std::greater<>());
    const int64_t p = q.back();
    q.pop_back();
    return p;
  }
  void Requeue(int32_t k) {
    const std::vector<int64_t>& q = parked_[k];
    if (q.empty() || queued_[k] == q.front()) return;
    queued_[k] = q.front();
    heap_.emplace_back(q.front(), k);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  // Drops stale entries; whether a live one is on top.
  bool LiveTop() {
    while (!heap_.empty()) {
      const auto [p, k] = heap_.front();
      const std::vector<int64_t>& q = parked_[k];
      if (!q.empty() && q.front() == p && queued_[k] == p) return true;
      if (queued_[k] == p) queued_[k] = -1;  // its queue's head changed: queued anew when held
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      heap_.pop_back();
    }
    return false;
  }
  Entry PopTop() {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Entry e = heap_.back();
    heap_.pop_back();
    queued_[e.second] = -1;
    return e;
  }

  // Sentence-transformers' walk over the examples not yet placed, in order.
  void FillGreedily(std::vector<int64_t>& out) {
    while (picks_ < b_) {
      if (LiveTop()) {  // parked positions all precede the cursor
        const auto [p, k] = PopTop();
        if (in_batch_[k] == batch_) {
          Hold(k);
          continue;
        }
        const int32_t c = Conflict(p);
        Unpark(k);
        if (c < 0) {
          Take(p, out);
          Hold(k);
        } else {
          Park(p, c);
          Hold(c);
          Requeue(k);
        }
      } else if (cursor_ < m_) {
        const int64_t p = cursor_++;
        const int32_t c = Conflict(p);
        if (c < 0) {
          Take(p, out);
        } else {
          Park(p, c);
          Hold(c);
        }
      } else {
        return;
      }
    }
  }

  // Every example left is parked under a key the batch holds: the first of them, in order,
  // complete the batch. Returns how many.
  int64_t FillAnyway(std::vector<int64_t>& out) {
    for (const int32_t k : held_list_) Requeue(k);
    held_list_.clear();
    int64_t added = 0;
    while (picks_ < b_ && placed_ < m_ && LiveTop()) {
      const int32_t k = PopTop().second;
      Take(Unpark(k), out);
      Requeue(k);
      ++added;
    }
    return added;
  }

  const std::vector<int64_t>& order_;
  const int64_t b_, m_;
  std::vector<int64_t> begin_;  // position p's keys: keys_[begin_[p], begin_[p + 1])
  std::vector<int32_t> keys_;
  std::vector<int64_t> in_batch_, held_, queued_;  // per key: a batch number, a position
  std::vector<std::vector<int64_t>> parked_;       // per key: min-heap of positions
  std::vector<Entry> heap_;                        // min-heap
  std::vector<int32_t> held_list_;
  int64_t batch_ = 0, picks_ = 0, placed_ = 0, cursor_ = 0;
};

}  // namespace

NoDuplicatesResult NoDuplicateOrder(const std::vector<int64_t>& order, int64_t batch_size,
                                    const TextKeysFn& text_keys) {
  if (batch_size <= 1 || order.size() <= 1 || !text_keys) return {order, 0};
  return Filler(order, batch_size, text_keys).Run();
}

TextKeysFn CacheTextKeys(int64_t n, const TextKeysFn& text_keys) {
  struct Table {
    std::vector<int64_t> begin{0};  // example i's keys: keys[begin[i], begin[i + 1])
    std::vector<uint64_t> keys;
  };
  auto table = std::make_shared<Table>();
  table->begin.reserve(static_cast<size_t>(n) + 1);
  table->keys.reserve(static_cast<size_t>(n) * 2);
  for (int64_t i = 0; i < n; ++i) {
    for (const uint64_t key : text_keys(i)) table->keys.push_back(key);
    table->begin.push_back(static_cast<int64_t>(table->keys.size()));
  }
  return [table](int64_t i) {
    return std::vector<uint64_t>(table->keys.begin() + table->begin[static_cast<size_t>(i)],
                                 table->keys.begin() + table->begin[static_cast<size_t>(i) + 1]);
  };
}

std::string ResolveBatchSampler(const std::string& configured, bool in_batch_negatives) {
  if (!configured.empty()) return configured;
  return in_batch_negatives ? "no_duplicates" : "default";
}

}  // namespace trainer
}  // namespace tunefleet
