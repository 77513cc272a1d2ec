// The node agent: registers this machine's slots (one per GPU, or CPU slots) with the head,
// starts one trainer process per assigned rank (launcher/agent/rank_launch.h says with which
// environment and logs), relays the trainers' reports to the head and the head's decisions to
// rank 0 (launcher/agent/trainer_channel.h), and reports each run's exit (outcome, exit code or
// signal, stderr tail; launcher/agent/local_run.h) once all its local ranks have ended. A trial's
// log_dir and fetch_back must lie in the folders the agent serves (trial_guard.h), or the run
// fails to start. Each rank of a `train` trial with reuse_worker runs in its slot's warm trainer
// worker instead of a fresh process (launcher/agent/warm_workers.h); the run does not tell the
// difference (launcher/agent/local_run.h).
//
// Cross-process invariants: a run's slots are busy from Assign until its Exit is sent; a rank
// that fails makes the agent stop the run's other local ranks (SIGTERM, then SIGKILL after the
// grace period) so none is left waiting in a collective; trainers die with the agent
// (PR_SET_PDEATHSIG).
//
// Losing the head (silent for 3 heartbeats, or a head with another session refusing it): the
// runs go on for up to head_grace while the agent registers again (a fresh socket every few
// seconds, as zguide's Lazy Pirate; comm/head_session.h); reports wait (the trainers wait for
// their decisions) and Exits are kept. The Register lists every run it holds, with the reports
// not yet answered and the Exits of the last runs it ended (launcher/head/ended_runs.h), so that a
// restarted head adopts them (head.h). No head within head_grace: every run is stopped and the
// agent exits.
// Thread-safety: one poll loop thread owns everything.
#ifndef TUNEFLEET_LAUNCHER_AGENT_AGENT_H_
#define TUNEFLEET_LAUNCHER_AGENT_AGENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/head_session.h"
#include "comm/proto/messages.pb.h"
#include "common/gpu_detect.h"
#include "common/signals.h"
#include "launcher/agent/agent_fetch_back.h"
#include "launcher/agent/agent_slots.h"
#include "launcher/agent/local_run.h"
#include "launcher/agent/mps_daemon.h"
#include "launcher/agent/rank_launch.h"
#include "launcher/agent/trainer_channel.h"
#include "launcher/agent/waiting_runs.h"
#include "launcher/agent/warm_workers.h"
#include "launcher/head/ended_runs.h"

namespace tunefleet {
namespace launcher {

class Agent {
 public:
  struct Options {
    std::string head;     // the head's endpoint
    std::string name;     // registered name; default: host name
    std::string address;  // MASTER_ADDR for runs it leads; default: found from the head route
    int slots = 0;        // 0: one per GPU, or 1 without GPUs; caps the GPU count otherwise
    // Of the GPUs this host shows the agent, only these (indices; empty: all), and not these
    // (launcher/host_filter.h's SelectGpus: the head's --include / --exclude).
    std::vector<int> gpu_ids, exclude_gpu_ids;
    std::string trainer_binary;  // the trainer executable
    // The agent's private runtime folder (common/runtime_dir.h): trainers.sock; default
    // RUNTIME/agent-NAME.
    std::string runtime_dir;
    std::string log_dir;  // rank logs when the trial names none; default runtime_dir
    // Folders a trial's log_dir and fetch_back may lie in, beside runtime_dir and log_dir
    // (launcher/agent/trial_guard.h); agent_main adds its working directory.
    std::vector<std::string> allow_dirs;
    // Variables a trial's env may set beside the families trial_guard.h allows (never LD_*).
    std::set<std::string> allow_env;
    absl::Duration kill_grace = absl::Seconds(5);
    absl::Duration register_timeout = absl::Seconds(30);  // give up if the head never answers
    std::string keys_dir;   // CURVE: server.pub and client.key (comm/curve_auth.h)
    std::string cache_dir;  // staged files (content-addressed); default LOG_DIR/cache
    // How long runs go on without a head after it was lost, waiting for it to come back.
    absl::Duration head_grace = absl::Minutes(5);
    // Warm workers: trials per worker when a trial says 0, and how long a starting worker may
    // take to register before its trial fails.
    int worker_max_trials = kDefaultWorkerMaxTrials;
    absl::Duration worker_register_timeout = absl::Seconds(60);
    // Run trials that share a GPU as clients of a CUDA MPS daemon of its own, where the host has
    // nvidia-cuda-mps-control (mps_daemon.h).
    bool mps = true;
    // Warm workers started at once for lanes 0..N-1 (RankLauncher::Prewarm).
    int prewarm_workers = 0;
    bool prewarm_mps = false;  // LazyMps::Prestart at once
    bool programs = true;      // run program trials (TrialSpec.program); false: refuse them
    // Called once, when the head first welcomes this agent (e.g. a detached agent's parent
    // may exit then).
    std::function<void()> on_registered;
  };

  // `signals` must watch SIGCHLD, SIGINT and SIGTERM and be created before any thread.
  Agent(Options options, SignalFd* signals);
  ~Agent();

  // Runs until signalled, told to shut down, or refused by the head.
  absl::Status Run();

 private:
  absl::Status Setup();
  // The Register this agent sends (comm::HeadSession asks for one each time).
  comm::Envelope MakeRegister() const;
  void HandleHeadMessage(const comm::Envelope& envelope);
  void HandleWelcome(const comm::Welcome& welcome);
  void HandleRefused(const comm::Refused& refused);
  void HandleTrainerMessage(const std::string& identity, const comm::Envelope& envelope);
  // A warm worker's TrialDone: its trial's rank ends and gives the worker back.
  void HandleTrialDone(const std::string& identity, const comm::TrialDone& done);
  void StartRun(const comm::Assign& assign);
  // Starts the waiting runs whose slots are free (or whose shared GPU has room), in order.
  void StartWaiting();
  void SpawnRanks(uint64_t run_id, LocalRun& run, const comm::Assign& assign,
                  const AgentSlots::Seats& seats);
  // Starts the ranks of runs whose staged files have arrived (or fails them).
  void FinishStaging();
  void StopRun(LocalRun& run, const std::string& reason, bool cancelled);
  void StopAll(const std::string& reason);
  // Reads every message the trainers' socket holds.
  void DrainTrainers();
  void ReapChildren();
  void FinishRuns();
  void SendToHead(const comm::Envelope& envelope);
  // The head is gone or another one answers: keep the runs, register again (logged once).
  void LoseHead(const std::string& why);
  void LogHeadLost(const std::string& why) const;
  // Sends what a program run's reports file holds since the last call (LocalRun::TakeReports).
  void RelayReports(uint64_t run_id, LocalRun& run, bool at_end);
  // Adds each GPU's sample to the run holding its slot and sends those runs' Telemetry.
  void SampleGpus(absl::Time now);
  void SendTelemetry(uint64_t run_id, const LocalRun& run);
  // Sends the run's Exit (or keeps it for the next Register) and remembers it.
  void SendExit(uint64_t run_id, const LocalRun& run, const comm::Exit& exit);

  Options options_;
  SignalFd* signals_;
  std::unique_ptr<AgentSlots> slots_;  // its GPUs or CPU slots, their runs, their telemetry
  LazyMps mps_;                        // before the runs and workers: quits after they are gone
  zmq::context_t context_;
  std::unique_ptr<comm::HeadSession> head_;
  std::unique_ptr<TrainerChannel> trainers_;
  std::unique_ptr<WarmWorkers> workers_;  // before launcher_, which lends them
  std::unique_ptr<RankLauncher> launcher_;
  EndedRuns ended_;
  std::unique_ptr<AgentFetchBack> fetch_back_;
  bool shutting_down_ = false;
  std::string fatal_;
  std::map<uint64_t, LocalRun> runs_;
  WaitingRuns waiting_;  // runs assigned and waiting for their slots
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_AGENT_H_
