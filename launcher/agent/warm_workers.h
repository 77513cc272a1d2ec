// The agent's warm trainer workers: at most one long-lived `trainer worker` process per slot,
// which runs the slot's trials (or its rank of a multi-rank trial) in-process, one at a time
// (TrialSpec.reuse_worker), so that a trial does not pay for process start, LibTorch/CUDA init
// and warm-up, nor, when the same slots run the same ranks again, for NCCL's set-up.
//
// Message sequence (over the agent's trainer channel, launcher/agent/trainer_channel.h):
//   agent starts `TRAINER worker` (slot env, TUNEFLEET_WORKER_SLOT, _MAX_TRIALS; its own log)
//   worker -> agent  Register{role WORKER, pid, slot}
//   agent -> worker  RunTrial{run_id, trial, argv, env, log_path}   (queued until Register)
//   the trial's own AgentClient registers as a TRAINER and reports, as a fresh rank's would
//   worker -> agent  TrialDone{run_id, exit_code, retiring, stderr_tail}
// During a trial the worker's process is lent to the trial's rank (LocalRank::process), which
// signals and reaps it as it would its own process; TrialDone gives it back (GiveBack).
//
// Recovery: a worker that dies (while lent: its trial fails; idle: quietly) or retires is
// dropped, and the slot's next trial starts a fresh one; so is one whose key (sweep, --config,
// trial env) differs from the next trial's, or that served its max trials (SIGTERM, SIGKILL
// after the kill grace). A worker that does not register within register_timeout fails its
// trial (Overdue). Stopping a warm trial kills its worker: it is never handed back.
//
// Time is an argument (now) and process ends come from the owner's waitpid (ChildEnded), so the
// pool is testable without waiting; processes are real.
// Thread-safety: owned by the agent's poll loop.
#ifndef TUNEFLEET_LAUNCHER_AGENT_WARM_WORKERS_H_
#define TUNEFLEET_LAUNCHER_AGENT_WARM_WORKERS_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "common/child_process.h"

namespace tunefleet {
namespace launcher {

inline constexpr int kDefaultWorkerMaxTrials = 16;

class WarmWorkers {
 public:
  struct Config {
    std::string agent;           // the agent's name, in worker names
    std::string trainer_binary;  // started as `TRAINER worker`
    std::string log_dir;         // workers' own logs: LOG_DIR/workers/slot-S.log
    // The agent's slots: a pool key (a lane, RunSeats in local_run.h) past them is seat K of a
    // shared GPU, named "slot-S.K" (K from 2) in logs and worker names.
    int slots = 1;
    int default_max_trials = kDefaultWorkerMaxTrials;  // TrialSpec.worker_max_trials 0
    absl::Duration register_timeout = absl::Seconds(60);
    absl::Duration kill_grace = absl::Seconds(5);
  };
  // Sends an envelope to a worker's DEALER identity (the trainer channel's ROUTER).
  using SendFn = std::function<absl::Status(const std::string&, const comm::Envelope&)>;

  WarmWorkers(Config config, SendFn send);
  ~WarmWorkers();  // kills what is left (ChildProcess's destructor)

  // A trial whose ranks the slots' warm workers may run: reuse_worker and `train` (never a
  // program of the user's own, TrialSpec.program), any number of
  // ranks (each runs in its slot's worker; a repeated multi-rank trial reuses the workers'
  // process group, trainer/distributed/trial_group.h).
  static bool Eligible(const comm::Assign& assign);
  // Workers serve only trials of one key: the sweep, argv's --config value, the trial's env
  // (TUNEFLEET_HPARAMS, which the trainer reads per trial, is the agent's: TrialSpec.params_json).
  static std::string Key(const comm::TrialSpec& spec,
                         const std::map<std::string, std::string>& trial_env);

  struct Lent {
    std::unique_ptr<ChildProcess> process;  // the trial's rank holds it until GiveBack
    std::string name;                       // "AGENT/slot-S/w-PID#N": its Nth trial (slot-S.K)
    std::string log_path;                   // the worker's own log
  };
  // Lends slot `slot`'s worker for `run_trial` (an Envelope{RunTrial}): the idle one when its key
  // is `key` and it served fewer than `max_trials` (0: the default), else a fresh one started
  // with `env` on top of the agent's (the old one is stopped). RunTrial goes now when the worker
  // registered, else when it does. Error: the worker could not start.
  absl::StatusOr<Lent> Lend(int slot, const std::string& key, int max_trials,
                            std::map<std::string, std::string> env, comm::Envelope run_trial,
                            absl::Time now);
  // Starts slot `slot`'s worker before any trial asks for it, with `env` (the agent's part: no
  // trial's), unless the slot has one. Until its first trial it is blank: CUDA, NCCL and the
  // trial's variables have not started in it (RunTrial sets them before its trial runs), so the
  // first Lend of its slot takes it whatever that trial's key, and the default max trials
  // (its own limit) bound it. Error: the worker could not start.
  absl::Status Prewarm(int slot, std::map<std::string, std::string> env, absl::Time now);
  // A Register{role WORKER} from `identity`: sends its queued RunTrial. False (logged) when no
  // worker of ours has that slot and pid.
  bool Registered(const std::string& identity, const comm::Register& reg);
  // The slot whose registered worker is `identity` and runs run `run_id`; nullopt otherwise.
  std::optional<int> SlotRunning(const std::string& identity, uint64_t run_id) const;
  // The trial's rank gives the worker back after its TrialDone: it waits for the slot's next
  // trial, or (retiring) is left to exit.
  void GiveBack(int slot, std::unique_ptr<ChildProcess> process, bool retiring, absl::Time now);
  // waitpid reported `pid` with `status`: true when it was a worker (dropped from the pool).
  bool ChildEnded(pid_t pid, int status);
  // Once per loop: SIGKILL to workers stopped more than the kill grace ago; the runs whose
  // worker did not register in time, with why (each reported once; the owner stops the run).
  std::vector<std::pair<uint64_t, std::string>> Tick(absl::Time now);
  // SIGTERM to every worker the pool holds (lent ones are their runs' to stop).
  void StopAll(absl::Time now);
  // No worker process left, lent ones included.
  bool empty() const { return slots_.empty() && leaving_.empty(); }

 private:
  struct Worker {
    pid_t pid = -1;
    std::unique_ptr<ChildProcess> process;  // null while lent to a trial's rank
    std::string key;
    bool blank = false;  // prewarmed, no trial yet: any key may take it
    int max_trials = 0;
    int trials = 0;        // trials handed to it so far
    std::string identity;  // its DEALER, once registered
    absl::Time started;
    uint64_t run_id = 0;                   // the run it runs, or waits to run; 0 when idle
    std::optional<comm::Envelope> queued;  // RunTrial until it registers
    bool overdue_reported = false;
    std::string log_path;
  };
  struct Leaving {
    std::unique_ptr<ChildProcess> process;
    absl::Time kill_at;
  };
  // Stops the slot's worker (SIGTERM now, SIGKILL after the grace) and forgets it.
  void Retire(int slot, absl::Time now, bool signal);
  void SendRunTrial(int slot, Worker& w);
  // Starts a worker for `slot` with `env` (plus its slot and max trials) into slots_.
  absl::StatusOr<Worker*> Start(int slot, const std::string& key, int max_trials,
                                std::map<std::string, std::string> env, absl::Time now);

  Config config_;
  SendFn send_;
  std::map<int, Worker> slots_;
  std::vector<Leaving> leaving_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_WARM_WORKERS_H_
