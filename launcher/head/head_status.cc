#include "launcher/head/head_status.h"

#include <algorithm>
#include <string>

namespace tunefleet {
namespace launcher {

comm::Status ClusterStatus(const PeerTable& peers, const RunTable& runs) {
  comm::Status status;
  for (const std::string& id : peers.AgentsInOrder()) {
    const Peer& peer = *peers.Find(id);
    comm::Status::Agent* agent = status.add_agents();
    agent->set_name(peer.name);
    agent->set_address(peer.address);
    agent->set_slots(peer.slots);
    agent->set_free_slots(std::max(0, peer.slots - runs.BusySlots(id)));
    agent->set_alive(true);
  }
  for (const HostEntry& host : peers.MissingHosts()) {
    comm::Status::Agent* agent = status.add_agents();
    agent->set_name(host.host);
    agent->set_slots(host.slots);
    agent->set_alive(false);
  }
  for (const auto& [run_id, run] : runs.runs()) {
    comm::Status::Run* out = status.add_runs();
    out->set_run_id(run_id);
    out->set_trial(run.spec.trial());
    out->set_sweep(run.spec.sweep());
    out->set_world_size(run.spec.world_size());
    out->set_queued(run.queued);
    for (const RunPart& part : run.parts) {
      if (!part.ended) out->add_agents(part.agent_name);
    }
  }
  return status;
}

}  // namespace launcher
}  // namespace tunefleet
