// A warm trainer worker's channel to its agent (`trainer worker`,
// trainer/commands/worker_command.h): a DEALER to TUNEFLEET_AGENT_ENDPOINT that registers as
// Register{role WORKER, pid, slot}, then receives the trials the agent hands it (RunTrial) and
// answers each with a TrialDone.
//
// The trial itself talks to the agent on its own connection (trainer/distributed/agent_client.h
// registers as a TRAINER), exactly as a fresh `trainer train` rank does; this channel carries only
// the worker's own messages. The header holds no ZeroMQ or protobuf type (pimpl): LibTorch code
// includes it, and PyTorch's include folder carries an older google/protobuf that must not meet the
// generated messages. Thread-safety: one thread.
#ifndef TUNEFLEET_TRAINER_DISTRIBUTED_WORKER_CHANNEL_H_
#define TUNEFLEET_TRAINER_DISTRIBUTED_WORKER_CHANNEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tunefleet {
namespace trainer {

// RunTrial, as the worker needs it.
struct TrialOrder {
  uint64_t run_id = 0;
  int64_t trial = -1;
  std::vector<std::string> argv;           // "train", "--config", ...
  std::map<std::string, std::string> env;  // set for the trial, restored after
  std::string log_path;                    // the trial's stdout and stderr
};

// TrialDone, as the worker sends it.
struct TrialResult {
  uint64_t run_id = 0;
  int exit_code = 0;
  bool retiring = false;
  std::string stderr_tail;  // the end of the trial's log
};

class WorkerChannel {
 public:
  // Connects to `endpoint` and sends Register{WORKER, pid, slot}.
  static absl::StatusOr<std::unique_ptr<WorkerChannel>> Connect(const std::string& endpoint,
                                                                int slot);

  enum class Event { kNone, kRunTrial, kShutdown };
  // Waits up to `timeout` for the agent's next message. kRunTrial fills `*order`; kShutdown: the
  // agent asked the worker to leave; kNone: nothing (other message types are logged and
  // dropped). A signal interrupting the wait also returns kNone.
  Event Next(absl::Duration timeout, TrialOrder* order);

  absl::Status SendDone(const TrialResult& result);

  // Waits (up to 2 s) for queued messages to reach the agent: sockets otherwise linger 0, and a
  // retiring worker's TrialDone must not be dropped as it exits.
  ~WorkerChannel();

 private:
  struct Impl;
  explicit WorkerChannel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DISTRIBUTED_WORKER_CHANNEL_H_
