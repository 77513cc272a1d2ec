// One run as an agent holds it: the local ranks of one trial attempt (their trainer processes
// and slots), its staging and fetch-back in flight, the reports its rank 0 sent that the head has
// not answered yet, and how it ends (the Exit the agent sends once all its local ranks ended).
//
// Invariants: a failed rank makes the run stop its other local ranks (SIGTERM, then SIGKILL
// after the kill grace, KillOverdue) so none is left waiting in a collective; the first failure
// is the one the Exit reports; a cancellation's reason wins over a later failure.
// Thread-safety: owned by the agent's poll loop; `staging` and `publishing` are futures of
// threads that touch nothing here.
#ifndef TUNEFLEET_LAUNCHER_LOCAL_RUN_H_
#define TUNEFLEET_LAUNCHER_LOCAL_RUN_H_

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "launcher/child_process.h"

namespace tunefleet {
namespace launcher {

// Reports kept per run while the head does not answer them.
inline constexpr size_t kKeptReports = 16;

struct LocalRank {
  int rank = 0;
  int slot = 0;
  std::unique_ptr<ChildProcess> process;
  std::string trainer_identity;  // its DEALER's identity once it registered
};

struct LocalRun {
  comm::TrialSpec spec;
  std::vector<LocalRank> ranks;
  std::vector<comm::Envelope> pending_decisions;  // for a rank 0 not yet connected
  bool stop_requested = false;
  bool cancelled = false;
  std::string cancel_reason;
  int failed_index = -1;           // first local rank that failed
  std::string start_error;         // a rank that could not start
  absl::Time kill_deadline = absl::InfiniteFuture();
  std::vector<int> rank_ids;       // as assigned
  std::string master_addr;
  int master_port = 0;
  std::deque<comm::Report> unanswered;  // rank 0's Reports with no Decision yet
  // Staging (TrialSpec.stage): the fetch in flight, the slots kept for the ranks meanwhile.
  std::future<absl::StatusOr<std::map<std::string, std::string>>> staging;
  std::vector<int> staged_slots;
  comm::Assign staged_assign;
  // Fetch-back: the Exit waits while its folder is hashed for the bulk server.
  std::optional<comm::Exit> exit;
  std::future<absl::StatusOr<std::string>> publishing;

  // SIGTERM to every live rank; SIGKILL follows `kill_grace` later (KillOverdue). `cancelled`
  // records `reason` as the run's cancellation (the first one counts).
  void Stop(const std::string& reason, bool cancelled, absl::Duration kill_grace);
  // SIGKILL to the ranks still alive once the kill deadline passed.
  void KillOverdue(absl::Time now);
  // Records that child `pid` ended with wait(2) `status`, if it is one of this run's ranks; a
  // rank that failed first (and not because of a cancellation) stops the others. True when it
  // was one of this run's.
  bool ChildEnded(uint64_t run_id, pid_t pid, int status, absl::Duration kill_grace);
  // No rank process alive and no staging in flight.
  bool Ended() const;

  // Where a Decision goes: rank 0 when it runs here, else the lowest local rank (it shares the
  // decision with the others); nullptr when that rank is gone.
  LocalRank* DecisionTarget();
  // Keeps a Report of rank 0 until answered (the newest kKeptReports).
  void KeepReport(const comm::Report& report);
  // A Decision answers the Report of its step; a STOP answers them all.
  void Answered(const comm::Decision& decision);

  // The run as a Register lists it for a head that may have to adopt it.
  comm::HeldRun Held(uint64_t run_id) const;
  // How the run ended, from what is recorded: CANCELLED, FAILED (a start error, or the first
  // failed rank with its exit code or signal and stderr tail), STOPPED or COMPLETED.
  comm::Exit MakeExit(uint64_t run_id, const std::string& agent) const;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_LOCAL_RUN_H_
