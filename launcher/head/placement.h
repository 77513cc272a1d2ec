// Placement of one trial's ranks on the agents' free slots: "a trial of W ranks goes to the
// fewest nodes with free GPUs".
//
//   - If one agent can host all W ranks, the agent with the fewest free slots that still fits
//     gets them (best fit, so large holes stay free for large trials; ties: earliest agent).
//   - Otherwise agents are taken by most free slots first (ties: earliest agent) until W is
//     covered, which uses the fewest nodes; each gets all its free slots except the last, which
//     gets the remainder.
//   - nullopt when the free slots of all agents together are fewer than W (or W < 1).
//
// A run that shares GPUs is placed by PlaceShared instead, on units of a slot.
//
// Ranks are consecutive in the returned order: the first agent runs ranks 0..k-1, so it hosts
// rank 0 and is the run's MASTER_ADDR. Pure function; thread-safe.
#ifndef TUNEFLEET_LAUNCHER_HEAD_PLACEMENT_H_
#define TUNEFLEET_LAUNCHER_HEAD_PLACEMENT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tunefleet {
namespace launcher {

// A slot's capacity in units, so that a run sharing a GPU (TrialSpec.trials_per_gpu N) holds
// kSlotUnits / N of it: exact for N up to 8 (840 = lcm(1..8)), rounded down beyond.
inline constexpr int kSlotUnits = 840;

struct PlacementCandidate {
  std::string name;    // for logs and tests only
  int free_slots = 0;  // negative counts as 0
  int free_units = 0;  // for PlaceShared: kSlotUnits per free slot, less the shared runs' units
  bool gpus = true;    // false: CPU slots, where a run that may share a GPU takes a whole slot
};

// (index into `agents`, ranks on that agent), in rank order.
using Placement = std::vector<std::pair<size_t, int>>;

std::optional<Placement> PlaceRanks(const std::vector<PlacementCandidate>& agents, int world_size);

// A one-rank run that may share a GPU (`units` = kSlotUnits / trials_per_gpu; a whole slot on an
// agent without GPUs): the agent with the most free units that holds them (spreading trials over
// the GPUs before doubling them up; ties: earliest agent); nullopt when none does. The agent
// picks the GPU and checks its memory.
std::optional<size_t> PlaceShared(const std::vector<PlacementCandidate>& agents, int units);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_PLACEMENT_H_
