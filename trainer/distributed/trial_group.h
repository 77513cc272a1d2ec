// The process group a trial's ranks train over (comm/process_group.h), set up from the
// torchrun-style environment the agent gives each rank.
//
// A fresh `trainer train` connects a group and shuts it down when the trial ends. A warm worker
// (trainer/commands/worker_command.h) turns on KeepTrialGroups: a group that served a trial which
// ended well on every rank is kept, communicators and all, for the worker's next trial, and reused
// when that trial's ranks are the same worker processes at the same ranks, so a repeated multi-GPU
// trial skips NCCL's set-up. No rank can know alone whether its peers kept the group (a peer's
// worker may have retired, failed or served another trial), so the ranks first meet on the new
// trial's rendezvous (MASTER_ADDR:MASTER_PORT, milliseconds): each offers the group it keeps
// (its id, its rank in it, world size, backend and timeout) and every rank decides alike from
// the same offers: all ranks offer one group at their own ranks, and it is reused; otherwise each
// drops what it keeps (aborted, locally) and a new group is connected over that rendezvous.
// A group is kept only after Close(), which waits for every rank; a trial that fails (the
// TrialGroup destroyed unclosed) aborts its group, kept or not.
// Thread-safety: one trial at a time per process (the kept group is process-wide).
#ifndef TUNEFLEET_TRAINER_DISTRIBUTED_TRIAL_GROUP_H_
#define TUNEFLEET_TRAINER_DISTRIBUTED_TRIAL_GROUP_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/process_group.h"

namespace tunefleet {
namespace trainer {

// Turns keeping groups between trials on or off for this process; off aborts a kept group.
void KeepTrialGroups(bool on);

class TrialGroup {
 public:
  static absl::StatusOr<std::unique_ptr<TrialGroup>> Open(const comm::DistEnv& env,
                                                          comm::ProcessGroup::Backend backend,
                                                          std::chrono::milliseconds timeout);
  ~TrialGroup();  // unclosed (a failed trial): the group is aborted, never kept
  TrialGroup(const TrialGroup&) = delete;
  TrialGroup& operator=(const TrialGroup&) = delete;

  comm::ProcessGroup* get() const { return group_.get(); }
  bool reused() const { return reused_; }
  // For the trainer's `group` line, e.g. "nccl, 4 ranks: a new group, connected in 1.21 s" or
  // "gloo, 2 ranks: the workers' group from their previous trial, reused (agreed in 0.003 s)".
  const std::string& description() const { return description_; }

  // The trial ended well on this rank: waits for every rank, then keeps the group for this
  // worker's next trial (KeepTrialGroups on) or shuts it down.
  absl::Status Close();

  // Whether `offers` (Rendezvous::Exchange's answers, in rank order) all name one kept group,
  // each at its own rank: then every rank reuses it. Exposed for tests.
  static bool OffersAgree(const std::vector<std::string>& offers);

 private:
  TrialGroup() = default;
  std::unique_ptr<comm::Rendezvous> rendezvous_;  // the trial's own
  std::unique_ptr<comm::ProcessGroup> group_;
  std::string id_;     // shared by the group's ranks (rank 0 drew it when it was connected)
  std::string offer_;  // what this rank offers for the group next time, but its rank
  bool reused_ = false;
  bool closed_ = false;
  std::string description_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DISTRIBUTED_TRIAL_GROUP_H_
