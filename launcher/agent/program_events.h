// TensorBoard event files of a program trial, written by the agent of its rank 0 from the
// reports it relays (launcher/agent/metrics_follower.h), as tunefleet's trainer writes its own:
// TRIAL_DIR/tensorboard/events.out.tfevents.* (common/event_file.h) holds each report's metrics
// and its `samples` as scalars at its step, the trial's parameters (TrialSpec.params_json) as the
// HParams plugin's session start, and its end, so `tensorboard --logdir RUN_DIR` shows program
// trials beside native ones. A write that fails is the caller's to log; the trial goes on.
// Thread-safety: owned by the agent's poll loop.
#ifndef TUNEFLEET_LAUNCHER_AGENT_PROGRAM_EVENTS_H_
#define TUNEFLEET_LAUNCHER_AGENT_PROGRAM_EVENTS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"
#include "common/event_file.h"

namespace tunefleet {
namespace launcher {

class ProgramEvents {
 public:
  // A new event file in TRIAL_DIR/tensorboard, with the session start of `params_json` (none
  // when it is empty).
  static absl::StatusOr<std::unique_ptr<ProgramEvents>> Open(const std::string& trial_dir,
                                                             const std::string& params_json);
  // One report: its metrics and "samples" at its step.
  absl::Status Add(const comm::Report& report);
  // The session's end: COMPLETED is a success, any other end not.
  absl::Status End(bool success);

 private:
  explicit ProgramEvents(std::unique_ptr<EventFileWriter> writer) : writer_(std::move(writer)) {}
  std::unique_ptr<EventFileWriter> writer_;
  bool session_ = false;  // a session start was written
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_PROGRAM_EVENTS_H_
