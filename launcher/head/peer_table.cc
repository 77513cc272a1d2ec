#include "launcher/head/peer_table.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace launcher {
namespace {

bool HostMatches(const HostEntry& entry, const std::string& name) {
  if (entry.host == name) return true;
  const size_t at = entry.host.find('@');
  return at != std::string::npos && entry.host.compare(at + 1, std::string::npos, name) == 0;
}

}  // namespace

PeerTable::PeerTable(std::vector<HostEntry> hosts, std::string hosts_file, absl::Duration heartbeat)
    : hosts_(std::move(hosts)), hosts_file_(std::move(hosts_file)), heartbeat_(heartbeat) {}

Peer* PeerTable::Find(const std::string& identity) {
  auto it = peers_.find(identity);
  return it == peers_.end() ? nullptr : &it->second;
}

const Peer* PeerTable::Find(const std::string& identity) const {
  auto it = peers_.find(identity);
  return it == peers_.end() ? nullptr : &it->second;
}

const HostEntry* PeerTable::FindHost(const std::string& name) const {
  for (const HostEntry& host : hosts_) {
    if (HostMatches(host, name)) return &host;
  }
  return nullptr;
}

absl::Status PeerTable::CheckAgent(const comm::Register& reg) const {
  if (reg.name().empty()) return absl::InvalidArgumentError("an agent must register with a name");
  if (reg.slots() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("agent ", reg.name(), " offers no slots"));
  }
  if (!hosts_.empty() && FindHost(reg.name()) == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("agent ", reg.name(), " is not in ", hosts_file_));
  }
  return absl::OkStatus();
}

std::string PeerTable::AgentNamed(const std::string& name, const std::string& identity) const {
  for (const auto& [id, peer] : peers_) {
    if (id != identity && peer.role == comm::AGENT && peer.name == name) return id;
  }
  return "";
}

std::pair<Peer*, bool> PeerTable::Upsert(const std::string& identity, const comm::Register& reg,
                                         absl::Time now) {
  auto [it, inserted] =
      peers_.try_emplace(identity, Peer{reg.role(), reg.name(), comm::Liveness(heartbeat_, now)});
  Peer& peer = it->second;
  peer.role = reg.role();
  peer.name = reg.name();
  peer.liveness.Heard(now);
  if (inserted) peer.seq = next_seq_++;
  if (reg.role() == comm::AGENT) {
    peer.address = reg.address().empty() ? "127.0.0.1" : reg.address();
    peer.hostname = reg.hostname();
    peer.offered_slots = reg.slots();
    peer.slots = reg.slots();
    peer.pid = reg.pid();
    peer.gpus = reg.gpus_size();
    if (const HostEntry* host = FindHost(reg.name()); host != nullptr) {
      peer.host_index = static_cast<int>(host - hosts_.data()) + 1;
      if (host->slots > 0) peer.slots = std::min(peer.slots, host->slots);
    }
  }
  return {&peer, inserted};
}

std::vector<std::string> PeerTable::Silent(absl::Time now) const {
  std::vector<std::string> out;
  for (const auto& [id, peer] : peers_) {
    if (!peer.liveness.Alive(now)) out.push_back(id);
  }
  return out;
}

std::vector<std::string> PeerTable::HeartbeatDue(absl::Time now) const {
  std::vector<std::string> out;
  for (const auto& [id, peer] : peers_) {
    if (peer.liveness.HeartbeatDue(now)) out.push_back(id);
  }
  return out;
}

std::vector<std::string> PeerTable::AgentsInOrder() const {
  std::vector<std::pair<std::pair<int, uint64_t>, std::string>> keyed;
  for (const auto& [id, peer] : peers_) {
    if (peer.role == comm::AGENT) keyed.push_back({{peer.host_index, peer.seq}, id});
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::string> out;
  out.reserve(keyed.size());
  for (auto& entry : keyed) out.push_back(std::move(entry.second));
  return out;
}

int PeerTable::TotalSlots() const {
  int total = 0;
  for (const auto& [id, peer] : peers_) {
    if (peer.role == comm::AGENT) total += peer.slots;
  }
  return total;
}

std::vector<HostEntry> PeerTable::MissingHosts() const {
  std::vector<HostEntry> missing;
  for (const HostEntry& host : hosts_) {
    bool found = false;
    for (const auto& [id, peer] : peers_) {
      if (peer.role == comm::AGENT && HostMatches(host, peer.name)) found = true;
    }
    if (!found) missing.push_back(host);
  }
  return missing;
}

}  // namespace launcher
}  // namespace tunefleet
