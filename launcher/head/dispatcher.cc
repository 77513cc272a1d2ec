#include "launcher/head/dispatcher.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "launcher/head/head_text.h"
#include "launcher/head/placement.h"

namespace tunefleet {
namespace launcher {
namespace {

constexpr int kBaseMasterPort = 29500;
constexpr int kMasterPortRange = 2000;

}  // namespace

void Dispatcher::Dispatch() {
  std::vector<std::string> agents = peers_.AgentsInOrder();
  if (!agents.empty() && peers_.MissingHosts().empty()) FailRunsTooBig();
  while (!runs_.queue().empty() && !agents.empty()) {
    RunRecord& run = *runs_.Find(runs_.queue().front());
    std::vector<PlacementCandidate> candidates;
    candidates.reserve(agents.size());
    for (const std::string& id : agents) {
      const Peer& peer = *peers_.Find(id);
      const int free_units = peer.slots * kSlotUnits - runs_.BusyUnits(id);
      candidates.push_back({peer.name, free_units / kSlotUnits, free_units, peer.gpus > 0});
    }
    const int units = RunUnits(run.spec, run.spec.world_size());
    std::optional<Placement> placement;
    if (units < kSlotUnits) {  // one rank sharing a GPU
      if (std::optional<size_t> at = PlaceShared(candidates, units))
        placement = Placement{{*at, 1}};
    } else {
      placement = PlaceRanks(candidates, run.spec.world_size());
    }
    if (!placement.has_value()) return;  // strict FIFO: later runs wait too

    std::vector<RunPart> parts;
    int next_rank = 0;
    for (const auto& [index, count] : *placement) {
      RunPart part;
      part.agent = agents[index];
      part.agent_name = peers_.Find(part.agent)->name;
      for (int r = 0; r < count; ++r) part.ranks.push_back(next_rank++);
      part.units = RunUnits(run.spec, count, candidates[index].gpus);
      parts.push_back(std::move(part));
    }
    const std::string master_addr = peers_.Find(parts.front().agent)->address;
    const int master_port =
        parts.size() == 1
            ? 0
            : kBaseMasterPort +
                  static_cast<int>(run.run_id % static_cast<uint64_t>(kMasterPortRange));
    runs_.Place(run, std::move(parts), master_addr, master_port);

    std::vector<std::string> where;
    int group_rank = 0;
    for (const RunPart& part : run.parts) {
      comm::Envelope envelope;
      comm::Assign* assign = envelope.mutable_assign();
      *assign->mutable_trial() = run.spec;
      for (int r : part.ranks) assign->add_ranks(r);
      assign->set_master_addr(master_addr);
      assign->set_master_port(master_port);
      assign->set_group_rank(group_rank++);
      assign->set_group_count(static_cast<int32_t>(run.parts.size()));
      head_.Send(part.agent, envelope);
      where.push_back(absl::StrCat(part.agent_name, " (rank ", RankRange(part.ranks), ")"));
    }
    TF_LOG(INFO) << "run " << run.run_id << " (trial " << run.spec.trial() << ", "
                 << run.spec.world_size() << " rank(s)) placed on " << absl::StrJoin(where, ", ")
                 << "; master " << master_addr << ":"
                 << (master_port == 0 ? std::string("auto") : std::to_string(master_port));
  }
}

// Queued runs up to too_big_checked_run_ fit too_big_checked_total_ slots, so unless the total
// changed only the runs submitted since need a look (the queue is in run_id order): scanning
// the whole queue on every event made the head quadratic in the queue's length.
void Dispatcher::FailRunsTooBig() {
  const int total = peers_.TotalSlots();
  const uint64_t checked = total == too_big_checked_total_ ? too_big_checked_run_ : 0;
  std::vector<uint64_t> too_big;
  const std::deque<uint64_t>& queue = runs_.queue();
  for (auto it = queue.rbegin(); it != queue.rend() && *it > checked; ++it) {
    if (runs_.Find(*it)->spec.world_size() > total) too_big.push_back(*it);
  }
  if (!queue.empty()) too_big_checked_run_ = std::max(checked, queue.back());
  too_big_checked_total_ = total;
  std::reverse(too_big.begin(), too_big.end());  // fail them in queue order
  for (uint64_t id : too_big) {
    RunRecord& run = *runs_.Find(id);
    head_.FailQueued(run,
                     absl::StrCat("needs ", run.spec.world_size(), " ranks but the cluster has ",
                                  total, " slots"),
                     comm::Exit::CLUSTER_TOO_SMALL);
  }
}

}  // namespace launcher
}  // namespace tunefleet
