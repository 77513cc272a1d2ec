// The head's dispatch (head.h): places the queued runs, strict FIFO, on the fewest live agents
// with free slots (placement.h), one Assign per agent, and fails the queued runs that no
// placement will ever fit rather than let them block the queue forever.
//
// A run's rank 0 lives on its first agent, whose registered address is MASTER_ADDR;
// master_port is 0 (the agent picks) for a one-agent run, else 29500 + run_id % 2000.
// Thread-safety: not thread-safe; owned by the head's poll loop.
#ifndef TUNEFLEET_LAUNCHER_HEAD_DISPATCHER_H_
#define TUNEFLEET_LAUNCHER_HEAD_DISPATCHER_H_

#include <cstdint>

#include "launcher/head/head_actions.h"
#include "launcher/head/peer_table.h"
#include "launcher/head/run_table.h"

namespace tunefleet {
namespace launcher {

class Dispatcher {
 public:
  // The tables and `head` must outlive the dispatcher.
  Dispatcher(const PeerTable& peers, RunTable& runs, HeadActions& head)
      : peers_(peers), runs_(runs), head_(head) {}

  // Places queued runs in FIFO order while the first fits; fails those that never can (with a
  // hosts file, only once every listed host has registered: the cluster may still be forming).
  void Dispatch();

 private:
  void FailRunsTooBig();

  const PeerTable& peers_;
  RunTable& runs_;
  HeadActions& head_;
  // The check for runs larger than the cluster: every queued run with a run_id up to
  // too_big_checked_run_ fits too_big_checked_total_ slots (-1: nothing checked yet).
  int too_big_checked_total_ = -1;
  uint64_t too_big_checked_run_ = 0;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_DISPATCHER_H_
