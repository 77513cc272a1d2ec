#include "launcher/head/placement.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace tunefleet {
namespace launcher {

std::optional<Placement> PlaceRanks(const std::vector<PlacementCandidate>& agents, int world_size) {
  if (world_size < 1) return std::nullopt;
  auto free_of = [&](size_t i) { return std::max(0, agents[i].free_slots); };

  // Best fit on one node.
  std::optional<size_t> best;
  for (size_t i = 0; i < agents.size(); ++i) {
    if (free_of(i) >= world_size && (!best || free_of(i) < free_of(*best))) best = i;
  }
  if (best) return Placement{{*best, world_size}};

  int64_t total = 0;
  for (size_t i = 0; i < agents.size(); ++i) total += free_of(i);
  if (total < world_size) return std::nullopt;

  // Fewest nodes: largest holes first; stable_sort keeps the given order among equals.
  std::vector<size_t> order(agents.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return free_of(a) > free_of(b); });
  Placement placement;
  int left = world_size;
  for (size_t i : order) {
    if (left == 0) break;
    const int take = std::min(left, free_of(i));
    if (take == 0) break;  // sorted: every later agent is full too
    placement.emplace_back(i, take);
    left -= take;
  }
  return placement;
}

std::optional<size_t> PlaceShared(const std::vector<PlacementCandidate>& agents, int units) {
  std::optional<size_t> best;
  for (size_t i = 0; i < agents.size(); ++i) {
    if (agents[i].free_units >= (agents[i].gpus ? units : kSlotUnits) &&
        (!best || agents[i].free_units > agents[*best].free_units)) {
      best = i;
    }
  }
  return best;
}

}  // namespace launcher
}  // namespace tunefleet
