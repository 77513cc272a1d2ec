// A trainer rank's channel to its agent (TUNEFLEET_AGENT_ENDPOINT, set by the agent): it sends
// Reports and waits for the Decision on each, like Optuna's trial.report() + should_prune().
//
// Only the rank that reports (rank 0) needs one. Without the environment variables the trainer
// runs standalone and FromEnvironment() returns nullptr.
// The header holds no ZeroMQ or protobuf type (pimpl): LibTorch code includes it, and PyTorch's
// include folder carries an older google/protobuf that must not meet the generated messages.
// Thread-safety: one thread.
#ifndef TUNEFLEET_TRAINER_DISTRIBUTED_AGENT_CLIENT_H_
#define TUNEFLEET_TRAINER_DISTRIBUTED_AGENT_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace trainer {

class AgentClient {
 public:
  // Reads TUNEFLEET_AGENT_ENDPOINT, TUNEFLEET_RUN_ID, TUNEFLEET_TRIAL, RANK and
  // TUNEFLEET_DECISION_TIMEOUT_MS (default 60000).
  static absl::StatusOr<std::unique_ptr<AgentClient>> FromEnvironment();

  // Sends an intermediate report of optimizer step `step` at `samples` on the sweep's resource
  // axis (Report.samples: the evaluation's key, trainer/train/train_loop.h) and waits for the
  // decision on it, which is matched by step. True: stop now. When no decision comes within
  // the timeout the trainer goes on (and logs it once).
  absl::StatusOr<bool> Report(int64_t step, int64_t samples,
                              const std::map<std::string, double>& metrics);
  // Sends the trial's final value (`samples`: the trial's total samples) and waits (up to the
  // timeout) for hpo's acknowledgement, a Decision on that step, so that the value is
  // delivered before the trainer exits.
  absl::Status ReportFinal(int64_t step, int64_t samples,
                           const std::map<std::string, double>& metrics);

  int64_t trial() const { return trial_; }

  ~AgentClient();

 private:
  struct Impl;
  explicit AgentClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  int64_t trial_ = -1;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DISTRIBUTED_AGENT_CLIENT_H_
