// The head's answer to a StatusRequest (comm/proto/messages.proto Status): every live agent in
// placement order with its slots and free slots, then the hosts-file hosts with no agent
// (alive false), then every run the head holds, queued or placed, in run_id order with the
// agents whose parts still run. A pure function of the head's two tables.
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_STATUS_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_STATUS_H_

#include "comm/proto/messages.pb.h"
#include "launcher/head/peer_table.h"
#include "launcher/head/run_table.h"

namespace tunefleet {
namespace launcher {

comm::Status ClusterStatus(const PeerTable& peers, const RunTable& runs);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_STATUS_H_
