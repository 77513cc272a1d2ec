// The head's side of a head restart (head.h): the head died and a new one binds the same
// endpoint. Agents register again listing the runs they hold (Register.runs) and the head
// adopts them (RunTable::Adopt: placed, no client yet); clients submit their unfinished trials
// again (Submit.resubmit) and get the adopted run back, with the reports and Exit held for
// them. For the recovery window (Head::Options::recovery_window), or until every hosts-file
// host registered, a resubmitted trial no agent holds yet waits for the agents that may hold
// it; once the window closes it runs again. Adopted runs that no client claims within
// Options::orphan_grace of the window's end are cancelled. A client the head lost (silent)
// leaves its placed runs as orphans too (Head::LosePeer): registering again within
// Options::client_grace and submitting them again, it gets them back; else they are cancelled. An
// agent registering again with this head's own session (it was declared lost) gets a Cancel for
// each run the head no longer has on it. Thread-safety: not thread-safe; owned by the head's poll
// loop.
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_RECOVERY_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_RECOVERY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "launcher/head/head_actions.h"
#include "launcher/head/peer_table.h"
#include "launcher/head/run_table.h"

namespace tunefleet {
namespace launcher {

class HeadRecovery {
 public:
  // `session` is this head's; the window closes at `deadline`. The tables and `head` must
  // outlive this.
  HeadRecovery(const PeerTable& peers, RunTable& runs, HeadActions& head, std::string session,
               absl::Time deadline, absl::Duration orphan_grace, absl::Duration client_grace)
      : peers_(peers),
        runs_(runs),
        head_(head),
        session_(std::move(session)),
        deadline_(deadline),
        orphan_grace_(orphan_grace),
        client_grace_(client_grace) {}

  // An agent's Register.runs (the agent is `identity`, registered as reg.name()): adopted
  // after a restart, cancelled when this head lost them.
  void AdoptHeldRuns(const std::string& identity, const comm::Register& reg);
  // A Submit with `resubmit` set from client `identity`, its trial's client name filled in.
  // True when handled here: given the adopted run back, already running, or held for the
  // window (taken from `*trial`); false: the head runs it as a new submission.
  bool Resubmit(const std::string& identity, comm::TrialSpec* trial);
  // From every tick of the poll loop: closes the window when it is due (held resubmissions are
  // attached or queued) and cancels the orphans nobody claimed.
  void Tick(absl::Time now);

 private:
  struct Resubmission {
    std::string client;  // identity
    comm::TrialSpec spec;
  };
  // Gives client `identity` (named `client_name`) its orphan run of `trial`, with what was
  // held for it; false when there is none.
  bool GiveBackOrphan(const std::string& identity, const std::string& client_name, int64_t trial);
  // Sends an adopted run's held messages to its new client, and its Exit if it has ended.
  void DeliverHeld(RunRecord& run);
  void EndRecovery();
  void ExpireOrphans(absl::Time now);

  const PeerTable& peers_;
  RunTable& runs_;
  HeadActions& head_;
  const std::string session_;
  const absl::Time deadline_;
  const absl::Duration orphan_grace_;
  const absl::Duration client_grace_;
  bool recovering_ = true;
  std::vector<Resubmission> held_resubmits_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_RECOVERY_H_
