// Simulated node agents and one simulated hpo client around a real head, driving whole trial
// lifecycles through it, all on the calling thread (one zmq_poll over every socket, so the
// simulation costs as little CPU as it can on a small machine).
//
// Each agent is a DEALER that registers (role AGENT, `slots` slots, name agentN, address
// 127.0.0.1) and heartbeats like launcher/agent/agent.cc (a Heartbeat when it has sent nothing for
// the Welcome's interval). For each Assign it takes a free slot and answers Started (run_id,
// trial, agent, ranks, a fake pid, the slot), then `reports_per_trial` Reports one at a time
// (each waits for the client's Decision, the last one `final`), then Exit COMPLETED. The trials
// do no work: the figures are the machinery's cost alone.
//
// The client registers (role CLIENT, name hpo), submits `trials` x `rounds` one-rank trials
// (world_size 1, trial number, sweep name, argv and log_dir like hpo's), either a round's
// trials all up-front (window 0), the next round once the last one's have all exited, or
// keeping `window` trials submitted but not exited, answers every Report with a Decision
// CONTINUE (trial and step, as hpo does), and counts the Exits it gets until every trial ended.
//
// Fails (never hangs) when the head refuses a peer (e.g. declared it lost), assigns an agent
// more runs than slots, falls silent for three heartbeat intervals, or no trial ends for
// `stall_timeout`.
// Thread-safety: not thread-safe; one thread creates and runs it.
#ifndef TUNEFLEET_TESTING_SIM_CLUSTER_H_
#define TUNEFLEET_TESTING_SIM_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tunefleet {
namespace bench {

struct SimOptions {
  int agents = 64;
  int slots = 8;
  int64_t trials = 10000;
  // Without a window, the client submits `trials` up-front, waits until all have exited, and
  // does so `rounds` times (the same head serves every round).
  int64_t rounds = 1;
  int64_t window = 0;  // trials submitted and not yet exited; 0: all up-front
  int reports_per_trial = 0;
  int64_t sample_every = 1000;  // call the sampler after this many exits (and at the last)
  absl::Duration stall_timeout = absl::Seconds(30);
};

struct SimResult {
  double seconds = 0;                             // first Submit sent -> last Exit received
  int64_t completed = 0;                          // Exits with outcome COMPLETED
  std::map<std::string, int64_t> other_outcomes;  // outcome name -> count, for the rest
  int64_t started = 0;                            // Started messages the client got
  int64_t reports = 0;          // Reports the client got (each answered by a Decision)
  int64_t heartbeats_sent = 0;  // by the simulated peers
  int64_t max_queued = 0;       // most trials submitted and not yet started, as the client saw
};

class SimCluster {
 public:
  // Called after every `sample_every` exits and after the last, with the exits so far and the
  // seconds since the first Submit.
  using Sampler = std::function<void(int64_t exits, double seconds)>;

  SimCluster(zmq::context_t& context, std::string endpoint, SimOptions options);
  ~SimCluster();
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;

  // Registers every agent, then the client; returns once all were welcomed.
  absl::Status Connect(absl::Duration timeout);
  // Runs the trials; `sampler` may be empty.
  absl::StatusOr<SimResult> Run(const Sampler& sampler);
  // Asks the head for its Status: the live agents and the runs it still holds.
  struct HeadStatus {
    int live_agents = 0;
    int runs = 0;
  };
  absl::StatusOr<HeadStatus> QueryStatus(absl::Duration timeout);
  // The client asks the head to shut down; returns once every agent got the head's Shutdown.
  absl::Status ShutdownHead(absl::Duration timeout);

 private:
  struct Peer;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTING_SIM_CLUSTER_H_
