// The head's fetch-backs in flight (TrialSpec.fetch_back): when rank 0's agent serves a run's
// output (Exit.fetch_hash), the head copies it back with FetchBack (head_staging.h) on a thread of
// its own, and the run's report to its client waits until that copy has finished.
// Thread-safety: not thread-safe; owned by the head's poll loop (the copies run on their own
// threads and touch nothing here).
#ifndef TUNEFLEET_LAUNCHER_HEAD_FETCH_BACKS_H_
#define TUNEFLEET_LAUNCHER_HEAD_FETCH_BACKS_H_

#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"
#include "launcher/head/peer_table.h"
#include "launcher/head/run_table.h"

namespace tunefleet {
namespace launcher {

class FetchBacks {
 public:
  struct Finished {
    uint64_t run_id = 0;
    absl::StatusOr<std::string> outcome;  // FetchBack's line, or why it failed
  };

  // Starts copying back to run.spec.fetch_back() what `agent` (rank 0's; null: it has left)
  // serves for the run (exit.fetch_hash on exit.fetch_port of its address); logs a WARNING
  // instead when the agent could not serve it (exit.fetch_error) or has left. A copy of the
  // same run still running is waited for and replaced.
  void Start(const RunRecord& run, const Peer* agent, const comm::Exit& exit);
  // Whether a copy for the run has not been taken by TakeFinished() yet.
  bool Pending(uint64_t run_id) const { return pending_.contains(run_id); }
  // The copies that have finished, no longer pending. Never blocks.
  std::vector<Finished> TakeFinished();

 private:
  // Destroying a pending future waits for its copy (std::async).
  absl::flat_hash_map<uint64_t, std::future<absl::StatusOr<std::string>>> pending_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_FETCH_BACKS_H_
