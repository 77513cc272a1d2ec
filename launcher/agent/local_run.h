// One run as an agent holds it: the local ranks of one trial attempt (their trainer processes
// and slots), its staging and fetch-back in flight, the reports its rank 0 sent that the head has
// not answered yet, and how it ends (the Exit the agent sends once all its local ranks ended).
//
// A rank runs in its own trainer process, or (warm, launcher/agent/warm_workers.h) in the slot's
// warm worker, whose process the rank borrows for the trial: signals, exit bookkeeping and the stop
// path are the same; the rank hands the process back when the worker says the trial is done
// (TrialDone). So a rank's end is its own explicit state (LocalRank::end), set when its
// process ends or its warm trial is done, never read from the process.
//
// Invariants: a rank is running while it has a process and no end; a failed rank makes the run
// stop its other local ranks (SIGTERM, then SIGKILL after the kill grace, KillOverdue) so none
// is left waiting in a collective; the first failure is the one the Exit reports; a
// cancellation's reason wins over a later failure; a warm worker that ends before it says the
// trial is done fails the trial, whatever its exit code.
// Thread-safety: owned by the agent's poll loop; `staging` and `publishing` are futures of
// threads that touch nothing here.
#ifndef TUNEFLEET_LAUNCHER_AGENT_LOCAL_RUN_H_
#define TUNEFLEET_LAUNCHER_AGENT_LOCAL_RUN_H_

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
#include "common/child_process.h"
#include "launcher/agent/gpu_telemetry.h"
#include "launcher/agent/metrics_follower.h"
#include "launcher/agent/program_events.h"

namespace tunefleet {
namespace launcher {

// Reports kept per run while the head does not answer them.
inline constexpr size_t kKeptReports = 16;

// How a rank ended: its process's exit, or the TrialDone of its warm worker.
struct RankEnd {
  bool ok = false;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string stderr_tail;
  std::string description;  // "exit code 1", "killed by signal 9 (Killed)"
};

// Where a run's local ranks go (AgentSlots::Take): a slot per rank, and its lane (the warm-worker
// pool's key: the slot itself for a GPU of its own, slot + slots * seat for a seat of a shared
// GPU).
struct RunSeats {
  std::vector<int> slots, lanes;
  int sharing = 1;  // the trials on its GPU as it takes it, itself included (one rank)
};

struct LocalRank {
  int rank = 0;
  int slot = 0;
  int lane = 0;  // its warm worker's pool key (RunSeats): the slot, or its shared seat
  // Its own trainer process, or the slot's warm worker lent for the trial (warm); null when it
  // could not start, and once a warm rank handed the worker back.
  std::unique_ptr<ChildProcess> process;
  std::string trainer_identity;  // its DEALER's identity once it registered
  bool warm = false;
  std::string log_path;    // the rank's log (a warm worker writes the trial's output there)
  std::string worker_log;  // warm: the worker's own log (its start-up)
  std::optional<RankEnd> end;

  bool running() const { return process != nullptr && !end.has_value(); }
};

struct LocalRun {
  comm::TrialSpec spec;
  std::vector<LocalRank> ranks;
  std::vector<comm::Envelope> pending_decisions;  // for a rank 0 not yet connected
  bool stop_requested = false;
  bool cancelled = false;
  std::string cancel_reason;
  int failed_index = -1;       // first local rank that failed
  std::string start_error;     // a rank that could not start
  bool start_refused = false;  // ... because the agent refused the trial's paths
  absl::Time kill_deadline = absl::InfiniteFuture();
  std::vector<int> rank_ids;  // as assigned
  std::string master_addr;
  int master_port = 0;
  std::deque<comm::Report> unanswered;  // rank 0's Reports with no Decision yet
  // Staging (TrialSpec.stage): the fetch in flight, the slots kept for the ranks meanwhile.
  std::future<absl::StatusOr<std::map<std::string, std::string>>> staging;
  RunSeats staged_seats;
  comm::Assign staged_assign;
  // Assigned but waiting for its slots (a GPU of its own, or a shared GPU's memory): the agent
  // starts waiting runs in assignment order as slots free up (staged_assign holds the Assign).
  bool waiting = false;
  std::string wait_reason;  // logged once per change
  // Fetch-back: the Exit waits while its folder is hashed for the bulk server.
  std::optional<comm::Exit> exit;
  std::future<absl::StatusOr<std::string>> publishing;
  GpuUsageMeter gpu_usage;  // NVML samples of its slots' GPUs (launcher/agent/gpu_telemetry.h)
  // A program trial's reports file, on the agent of its rank 0 (launcher/agent/program_launch.h):
  // followed every loop, and once more after its ranks ended, before the Exit.
  std::unique_ptr<MetricsFollower> reports;
  std::unique_ptr<ProgramEvents> events;  // its TensorBoard events, beside `reports`

  // A program of the user's own (TrialSpec.program): no rank registers, Decisions stop it by
  // signals, and its exit codes mean nothing special.
  bool program() const { return spec.has_program(); }
  // SIGKILL this long after SIGTERM: the program's trainer.kill_grace_s, else the agent's.
  absl::Duration Grace(absl::Duration agent_grace) const;
  // A program run's new lines (MetricsFollower::Poll) as Envelopes for the head: its Reports
  // (kept as rank 0's unanswered ones, and written to `events`) and warnings; none for other
  // runs. `at_end` (its ranks have ended): the last line, and the events' session end.
  std::vector<comm::Envelope> TakeReports(uint64_t run_id, bool at_end);

  // SIGTERM to every live rank; SIGKILL follows `kill_grace` later (KillOverdue). `cancelled`
  // records `reason` as the run's cancellation (the first one counts).
  void Stop(const std::string& reason, bool cancelled, absl::Duration kill_grace);
  // SIGKILL to the ranks still alive once the kill deadline passed.
  void KillOverdue(absl::Time now);
  // Records that child `pid` ended with wait(2) `status`, if it is one of this run's ranks; a
  // rank that failed first (and not because of a cancellation) stops the others. True when it
  // was one of this run's.
  bool ChildEnded(uint64_t run_id, pid_t pid, int status, absl::Duration kill_grace);
  // Records how rank index `i` ended (a warm rank's TrialDone); a failure stops the others as
  // ChildEnded does.
  void RankEnded(uint64_t run_id, size_t i, RankEnd end, absl::Duration kill_grace);
  // A warm worker's TrialDone for the rank it runs on `lane`: that rank ends as the worker says
  // (RankEnded), and the worker's process is handed back, to be reused unless `*retiring` (it
  // retires, or the run is being stopped and signalled it); null when no rank runs there.
  std::unique_ptr<ChildProcess> WarmTrialDone(const comm::TrialDone& done, int lane,
                                              absl::Duration kill_grace, bool* retiring);
  // No rank running, no staging in flight, and not waiting for slots (unless cancelled).
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

// Whether child `pid`, which exited 0 (wait(2) `status`), is a warm worker lent to one of
// `runs`' ranks still running (its TrialDone may still be on the way).
bool LentWorkerExitedCleanly(const std::map<uint64_t, LocalRun>& runs, pid_t pid, int status);

// Whether a program's stderr tail says it ran out of GPU memory (PyTorch's
// torch.OutOfMemoryError, "CUDA out of memory", cudaErrorMemoryAllocation).
bool SaysOutOfMemory(const std::string& stderr_tail);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_LOCAL_RUN_H_
