// The head's registry of peers on its ROUTER socket: node agents (name, MASTER_ADDR address,
// slots) and hpo clients, keyed by ZeroMQ identity, each with its heartbeat liveness
// (comm/liveness.h), and the hosts file that says which agent names are welcome and caps their
// slots. No sockets: the head (head.h) decides what to send.
//
// Agents come in placement order: hosts-file order when there is one, then registration order.
// A host entry `user@host` stands for the agent name `host` (and `user@host`).
// Thread-safety: not thread-safe; owned by the head's poll loop.
#ifndef TUNEFLEET_LAUNCHER_HEAD_PEER_TABLE_H_
#define TUNEFLEET_LAUNCHER_HEAD_PEER_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/liveness.h"
#include "comm/proto/messages.pb.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {

struct Peer {
  comm::Role role = comm::ROLE_UNSPECIFIED;
  std::string name;
  comm::Liveness liveness;
  // Agents only.
  std::string address;  // MASTER_ADDR of the runs whose rank 0 it hosts
  std::string hostname;
  int slots = 0;  // what it registered, capped by its hosts-file slots=N
  int offered_slots = 0;
  int pid = 0;
  int gpus = 0;
  int host_index = 0;  // 1-based line order in the hosts file; 0 without one
  uint64_t seq = 0;    // registration order
};

class PeerTable {
 public:
  PeerTable(std::vector<HostEntry> hosts, std::string hosts_file, absl::Duration heartbeat);

  Peer* Find(const std::string& identity);
  const Peer* Find(const std::string& identity) const;
  // Adds or updates the peer; a new peer gets the next registration number. Returns it and
  // whether it was new.
  std::pair<Peer*, bool> Upsert(const std::string& identity, const comm::Register& reg,
                                absl::Time now);
  void Erase(const std::string& identity) { peers_.erase(identity); }
  const absl::flat_hash_map<std::string, Peer>& peers() const { return peers_; }

  // Why an agent registration is refused by name or slots, or OK (hosts file, slots > 0).
  absl::Status CheckAgent(const comm::Register& reg) const;
  // Another agent (not `identity`) registered under `name`, or "".
  std::string AgentNamed(const std::string& name, const std::string& identity) const;

  // Agent identities in placement order.
  std::vector<std::string> AgentsInOrder() const;
  // Identities of the peers silent too long at `now` (comm/liveness.h), and of those owed a
  // heartbeat then.
  std::vector<std::string> Silent(absl::Time now) const;
  std::vector<std::string> HeartbeatDue(absl::Time now) const;
  int TotalSlots() const;
  bool has_hosts() const { return !hosts_.empty(); }
  // Hosts-file entries no registered agent stands for.
  std::vector<HostEntry> MissingHosts() const;
  const std::string& hosts_file() const { return hosts_file_; }

 private:
  const HostEntry* FindHost(const std::string& name) const;

  std::vector<HostEntry> hosts_;
  std::string hosts_file_;
  absl::Duration heartbeat_;
  uint64_t next_seq_ = 1;
  absl::flat_hash_map<std::string, Peer> peers_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_PEER_TABLE_H_
