#include "trainer/tasks/eval_order.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace tunefleet {
namespace trainer {

std::vector<int64_t> RankOrder(const TaskData& data, comm::ProcessGroup* group) {
  std::vector<int64_t> order(data.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return data.tokens(a) > data.tokens(b); });
  if (group != nullptr && group->size() > 1) {
    std::vector<int64_t> mine;
    for (size_t i = group->rank(); i < order.size(); i += group->size()) mine.push_back(order[i]);
    order = std::move(mine);
  }
  return order;
}

}  // namespace trainer
}  // namespace tunefleet
