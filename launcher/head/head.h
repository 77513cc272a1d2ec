// The head: owns the cluster. One ROUTER socket serves both node agents and hpo clients; the
// head records who registered, watches their heartbeats, queues the clients' trials, places
// each one on the fewest agents with free slots (placement.h), and routes Started / Report /
// Exit from agents to the submitting client and Decision / Cancel from the client to the agents.
//
// Protocol (comm/proto/messages.proto; every message one Envelope):
//   - Register{AGENT|CLIENT} -> Welcome{session, heartbeat_interval_ms}, or Refused{reason}
//     (agent name taken by a live agent, not in the hosts file, no slots). Anything else from an
//     identity that did not register -> Refused{"register first"}; another protocol version ->
//     Refused{reason, supported_version}; malformed or oversized frames are dropped and logged.
//   - Liveness (zguide Majordomo): any message counts as life; the head heartbeats a peer it has
//     sent nothing for one interval; a peer silent for comm::kDefaultLiveness intervals is lost.
//     A lost agent fails every run with ranks on it (Cancel to the run's other agents, Exit
//     FAILED to the client); a lost client's runs are cancelled or dropped from the queue.
//   - Submit{trial} -> run_id (increasing from 1), strict FIFO queue; the first queued run is
//     placed as soon as the live agents' free slots allow, with one Assign per agent.
//   - Decision / Cancel from a client name the run by trial number; the head fills run_id. A
//     Decision goes to the agent hosting rank 0; a Cancel drops a queued run (Exit CANCELLED)
//     or goes to every agent of a running one.
//   - Exit from each agent of a run is aggregated into one Exit for the client (run_table.h).
//   - StatusRequest -> Status; Shutdown from a client, SIGINT/SIGTERM or Stop(): Shutdown to
//     every agent, and Run() returns OK.
//   - Restart (the head died and a new one binds the same endpoint): agents and clients find
//     a head with another session (Refused{register first, session}) and register again;
//     agents list the runs they hold (Register.runs) and the head adopts them (run_table.h);
//     clients submit their unfinished trials again (Submit.resubmit) and get the adopted run
//     back, with the reports and Exit held for them; a resubmitted trial no agent holds runs
//     again once the recovery window closes. An agent registering again with the same session
//     (it was declared lost) gets a Cancel for each run the head no longer has on it.
//
// Cross-process invariants: an agent's slots are busy from the Assign until that agent's Exit
// for the run (or its loss); a run's rank 0 lives on its first agent, whose registered address
// is MASTER_ADDR; master_port is 0 (the agent picks) for a one-agent run, else
// 29500 + run_id % 2000.
//
// Thread-safety: Run() is one single-threaded poll loop that owns every socket and all state;
// Stop() is the only method safe to call from another thread (it signals the loop through an
// inproc PAIR control socket).
//
// The parts: head_socket.h (the ROUTER and the Stop() channel), peer_table.h and run_table.h
// (who is there, what runs where), dispatcher.h (queue and placement), head_recovery.h
// (restart), fetch_backs.h (TrialSpec.fetch_back), head_status.h (the Status reply).
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "common/signals.h"
#include "launcher/head/dispatcher.h"
#include "launcher/head/fetch_backs.h"
#include "launcher/head/head_actions.h"
#include "launcher/head/head_recovery.h"
#include "launcher/head/head_socket.h"
#include "launcher/head/head_staging.h"
#include "launcher/head/peer_table.h"
#include "launcher/head/run_table.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {

class Head : private HeadActions {
 public:
  struct Options {
    std::string bind = "tcp://127.0.0.1:5555";  // also ipc://PATH, tcp://127.0.0.1:* (any port)
    absl::Duration heartbeat_interval = absl::Seconds(1);
    std::vector<HostEntry> hosts;          // empty: accept any agent
    std::string hosts_file = "hosts.txt";  // named in refusals
    // CURVE (comm/curve_auth.h): the key folder of `head --gen_keys`; empty: no encryption.
    std::string keys_dir;
    // Called from the poll loop at every tick (a tenth of the heartbeat interval), e.g. to
    // follow agents the head started (agent_launcher.h).
    std::function<void(absl::Time)> on_tick;
    // The first run_id this head gives out. A head that may restart while its agents hold
    // runs uses a base no earlier instance reached (head_main: the clock).
    uint64_t first_run_id = 1;
    // Head restart: for this long after start (zero: 2 x liveness x heartbeat), or until
    // every hosts-file host registered, trials that clients submit again (Submit.resubmit)
    // wait for the agents holding them to register, rather than run a second time.
    absl::Duration recovery_window = absl::ZeroDuration();
    // Runs adopted from agents that no client claims within this long are cancelled.
    absl::Duration orphan_grace = absl::Seconds(60);
    // A client lost for silence (a starved or stopped process) keeps its placed runs this
    // long: registering again and submitting them again (Submit.resubmit), it gets them back.
    absl::Duration client_grace = absl::Seconds(30);
  };

  // `signals` (may be null) must watch SIGINT and SIGTERM and be created before this Head, so
  // that ZeroMQ's threads inherit the blocked mask.
  Head(Options options, SignalFd* signals);
  ~Head();
  Head(const Head&) = delete;
  Head& operator=(const Head&) = delete;

  // Binds the ROUTER socket (idempotent; Run() calls it too). InvalidArgument for a malformed
  // endpoint, Unavailable when it cannot bind.
  absl::Status Bind();
  // The bound endpoint with wildcards resolved ("tcp://127.0.0.1:41234"); empty before Bind().
  const std::string& endpoint() const { return socket_.endpoint(); }

  // Serves until signalled, stopped or told to shut down by a client (OK), or a fatal socket
  // error.
  absl::Status Run();

  // Names of the agents registered and alive now (poll-loop thread only, e.g. from on_tick).
  absl::flat_hash_set<std::string> LiveAgentNames() const;
  // Makes Run() send Shutdown to the agents and return OK. Thread-safe; callable before Run().
  void Stop();

 private:
  void HandleFrame(const std::string& identity, absl::StatusOr<comm::Envelope>& received);
  void HandleRegister(const std::string& identity, const comm::Register& reg);
  void HandleSubmit(const std::string& identity, comm::Envelope& envelope);
  void HandleDecision(const std::string& identity, comm::Envelope& envelope);
  void HandleCancel(const std::string& identity, const comm::Cancel& cancel);
  void HandleExit(const std::string& identity, const comm::Exit& exit);
  void ForwardToClient(const std::string& identity, uint64_t run_id,
                       const comm::Envelope& envelope);

  // HeadActions (head_actions.h), for the dispatcher and the restart recovery too.
  void Send(const std::string& identity, const comm::Envelope& envelope) override;
  void Dispatch() override { dispatcher_.Dispatch(); }
  void FailQueued(RunRecord& run, const std::string& reason, comm::Exit::Cause cause) override;
  bool PrepareStaging(RunRecord& run) override;
  void CancelRun(RunRecord& run, const std::string& reason,
                 const std::string& except = "") override;
  void ReportAndMaybeErase(RunRecord& run) override;

  void LosePeer(const std::string& identity, const std::string& reason);
  void Tick(absl::Time now);
  void ShutdownAgents(const std::string& reason);
  // Logs finished fetch-backs and reports their runs.
  void FinishFetchBacks();

  void Refuse(const std::string& identity, const std::string& reason, bool with_version = false);
  // Logs one WARNING line per peer per second at most.
  void LogLimited(const std::string& identity, const std::string& message);

  Options options_;
  SignalFd* signals_;
  std::string session_;
  HeadSocket socket_;
  bool stop_ = false;

  PeerTable peers_;
  RunTable runs_;
  Dispatcher dispatcher_{peers_, runs_, *this};
  HeadRecovery recovery_;           // Options::recovery_window
  std::unique_ptr<Stager> stager_;  // from Bind()
  // Fetch-backs in flight (TrialSpec.fetch_back); the run's report to its client waits for it.
  FetchBacks fetches_;
  absl::flat_hash_map<std::string, absl::Time> last_warning_;
  absl::Time next_tick_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_H_
