// The node agent: registers this machine's slots (one per GPU, or CPU slots) with the head,
// starts one trainer process per assigned rank with the torchrun-style environment, relays the
// trainers' reports to the head and the head's decisions to rank 0, and reports each run's
// exit (outcome, exit code or signal, stderr tail) once all its local ranks have ended.
//
// Environment of a rank: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, CUDA_VISIBLE_DEVICES (its one GPU, or empty on CPU slots), OMP_NUM_THREADS on CPU
// slots (cores / slots, unless set), TUNEFLEET_AGENT_ENDPOINT (the agent's local ZeroMQ
// endpoint), TUNEFLEET_RUN_ID, TUNEFLEET_TRIAL, TUNEFLEET_SWEEP, and those of the trial's own
// env that launcher/trial_guard.h lets through (never LD_*). A trial's log_dir and fetch_back
// must lie in the folders the agent serves (trial_guard.h), or the run fails to start.
//
// Cross-process invariants: a run's slots are busy from Assign until its Exit is sent; a rank
// that fails makes the agent stop the run's other local ranks (SIGTERM, then SIGKILL after the
// grace period) so none is left waiting in a collective; trainers die with the agent
// (PR_SET_PDEATHSIG).
//
// Losing the head (silent for 3 heartbeats, or a head with another session refusing it): the
// runs go on for up to head_grace while the agent registers again (a fresh socket every few
// seconds, as zguide's Lazy Pirate); reports wait (the trainers wait for their decisions) and
// Exits are kept. The Register lists every run it holds, with the reports not yet answered and
// the Exits of the last runs it ended, so that a restarted head adopts them (head.h). No head
// within head_grace: every run is stopped and the agent exits.
// Thread-safety: one poll loop thread owns everything.
#ifndef TUNEFLEET_LAUNCHER_AGENT_H_
#define TUNEFLEET_LAUNCHER_AGENT_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/liveness.h"
#include "comm/proto/messages.pb.h"
#include "comm/ucx_transfer.h"
#include "common/signals.h"
#include "launcher/child_process.h"
#include "launcher/gpu_detect.h"

namespace tunefleet {
namespace launcher {

class Agent {
 public:
  struct Options {
    std::string head;            // the head's endpoint
    std::string name;            // registered name; default: host name
    std::string address;         // MASTER_ADDR for runs it leads; default: found from the head route
    int slots = 0;               // 0: one per GPU, or 1 without GPUs; caps the GPU count otherwise
    std::string trainer_binary;  // the trainer executable
    // The agent's private runtime folder (common/runtime_dir.h): trainers.sock; default
    // RUNTIME/agent-NAME.
    std::string runtime_dir;
    std::string log_dir;         // rank logs when the trial names none; default runtime_dir
    // Folders a trial's log_dir and fetch_back may lie in, beside runtime_dir and log_dir
    // (launcher/trial_guard.h); agent_main adds its working directory.
    std::vector<std::string> allow_dirs;
    // Variables a trial's env may set beside the families trial_guard.h allows (never LD_*).
    std::set<std::string> allow_env;
    absl::Duration kill_grace = absl::Seconds(5);
    absl::Duration register_timeout = absl::Seconds(30);  // give up if the head never answers
    std::string keys_dir;        // CURVE: server.pub and client.key (comm/curve_auth.h)
    std::string cache_dir;       // staged files (content-addressed); default LOG_DIR/cache
    // How long runs go on without a head after it was lost, waiting for it to come back.
    absl::Duration head_grace = absl::Minutes(5);
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
  struct LocalRank {
    int rank = 0;
    int slot = 0;
    std::unique_ptr<ChildProcess> process;
    std::string trainer_identity;  // its DEALER's identity once it registered
  };
  struct RunState {
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
  };
  // A run that ended: its Exit, kept for a head that may not have seen it.
  struct EndedRun {
    comm::HeldRun held;
    absl::Time at;
  };

  absl::Status Setup();
  void HandleHeadMessage(const comm::Envelope& envelope);
  void HandleTrainerMessage(const std::string& identity, const comm::Envelope& envelope);
  void StartRun(const comm::Assign& assign);
  void SpawnRanks(uint64_t run_id, RunState& run, const comm::Assign& assign,
                  const std::vector<int>& free);
  // Starts the ranks of runs whose staged files have arrived (or fails them).
  void FinishStaging();
  void DeliverDecision(RunState& run, const comm::Envelope& envelope);
  void StopRun(RunState& run, const std::string& reason, bool cancelled);
  void ReapChildren();
  void FinishRuns();
  void SendToHead(const comm::Envelope& envelope);
  void SendRegister();
  // A fresh socket to the head (queued messages to a dead head are dropped).
  absl::Status ConnectHead();
  // The head is gone or another one answers: keep the runs, register again.
  void LoseHead(const std::string& why);
  comm::HeldRun Held(uint64_t run_id, const RunState& run) const;
  // Starts publishing the run's fetch_back path on this agent's bulk server (on a thread);
  // false when there is none to offer (`exit` then says why, if it failed).
  bool StartFetchBackOffer(RunState& run, comm::Exit* exit);
  // Sends the run's Exit (or keeps it for the next Register) and remembers it.
  void SendExit(uint64_t run_id, const RunState& run, const comm::Exit& exit);
  int FreeSlots() const;

  Options options_;
  SignalFd* signals_;
  std::vector<GpuInfo> gpus_;
  int slots_ = 0;
  std::vector<uint64_t> slot_owner_;  // run id per slot, 0 = free
  zmq::context_t context_;
  std::unique_ptr<zmq::socket_t> head_;
  std::unique_ptr<zmq::socket_t> trainers_;
  std::string trainer_endpoint_;
  std::unique_ptr<comm::Liveness> head_liveness_;
  bool welcomed_ = false;
  bool head_lost_logged_ = false;
  absl::Time registered_at_;
  std::string session_;          // the head's, from its last Welcome
  bool head_lost_ = false;       // lost after a Welcome; registering again
  absl::Time head_lost_at_;
  std::deque<EndedRun> ended_;   // newest last
  std::unique_ptr<comm::BulkServer> bulk_;  // serves fetch_back folders (started on first use)
  int bulk_port_ = 0;
  bool shutting_down_ = false;
  std::string fatal_;
  std::map<uint64_t, RunState> runs_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_H_
