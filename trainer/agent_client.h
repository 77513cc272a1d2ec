// A trainer rank's channel to its agent (TUNEFLEET_AGENT_ENDPOINT, set by the agent): it sends
// Reports and waits for the Decision on each, like Optuna's trial.report() + should_prune().
//
// Only the rank that reports (rank 0) needs one. Without the environment variables the trainer
// runs standalone and FromEnvironment() returns nullptr.
// Thread-safety: one thread.
#ifndef TUNEFLEET_TRAINER_AGENT_CLIENT_H_
#define TUNEFLEET_TRAINER_AGENT_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace trainer {

class AgentClient {
 public:
  // Reads TUNEFLEET_AGENT_ENDPOINT, TUNEFLEET_RUN_ID, TUNEFLEET_TRIAL, RANK and
  // TUNEFLEET_DECISION_TIMEOUT_MS (default 60000).
  static absl::StatusOr<std::unique_ptr<AgentClient>> FromEnvironment();

  // Sends an intermediate report and waits for the decision on it. True: stop now. When no
  // decision comes within the timeout the trainer goes on (and logs it once).
  absl::StatusOr<bool> Report(int64_t step, const std::map<std::string, double>& metrics);
  // Sends the trial's final value and waits (up to the timeout) for hpo's acknowledgement, a
  // Decision on that step, so that the value is delivered before the trainer exits.
  absl::Status ReportFinal(int64_t step, const std::map<std::string, double>& metrics);

  int64_t trial() const { return trial_; }

 private:
  AgentClient() : context_(1) {}
  absl::Status Send(int64_t step, const std::map<std::string, double>& metrics, bool final);
  // Waits for the Decision on `step` (or any STOP); nullopt after the timeout.
  std::optional<comm::Decision::Action> AwaitDecision(int64_t step);

  zmq::context_t context_;
  std::unique_ptr<zmq::socket_t> socket_;
  uint64_t run_id_ = 0;
  int64_t trial_ = -1;
  int rank_ = 0;
  absl::Duration decision_timeout_ = absl::Seconds(60);
  bool timeout_logged_ = false;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_AGENT_CLIENT_H_
