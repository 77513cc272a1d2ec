// A HeadActions (launcher/head/head_actions.h) for the unit tests of the head's parts
// (dispatcher_test, head_recovery_test): it records every call, and does to the RunTable what
// the head does (FailQueued erases the run, CancelRun marks it, ReportAndMaybeErase reports once
// and erases an ended run), with no socket.
// Thread-safety: not thread-safe; one test's thread.
#ifndef TUNEFLEET_TESTS_LAUNCHER_HEAD_RECORDING_HEAD_ACTIONS_H_
#define TUNEFLEET_TESTS_LAUNCHER_HEAD_RECORDING_HEAD_ACTIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "comm/proto/messages.pb.h"
#include "launcher/head/head_actions.h"
#include "launcher/head/run_table.h"

namespace tunefleet {
namespace launcher {

class RecordingHeadActions : public HeadActions {
 public:
  struct Failed {
    uint64_t run_id;
    std::string reason;
    comm::Exit::Cause cause;
  };
  struct Cancelled {
    uint64_t run_id;
    std::string reason;
    std::string except;
  };
  struct Reported {
    uint64_t run_id;
    std::string client;
    comm::Exit exit;
  };

  explicit RecordingHeadActions(RunTable& runs) : runs_(runs) {}

  void Send(const std::string& identity, const comm::Envelope& envelope) override;
  void Dispatch() override { ++dispatches; }
  void FailQueued(RunRecord& run, const std::string& reason, comm::Exit::Cause cause) override;
  bool PrepareStaging(RunRecord& run) override;
  void CancelRun(RunRecord& run, const std::string& reason, const std::string& except) override;
  void ReportAndMaybeErase(RunRecord& run) override;

  // The messages sent to `identity`, in order.
  std::vector<comm::Envelope> SentTo(const std::string& identity) const;

  std::vector<std::pair<std::string, comm::Envelope>> sent;
  std::vector<Failed> failed;
  std::vector<Cancelled> cancelled;
  std::vector<Reported> reported;
  std::vector<uint64_t> staged;
  int dispatches = 0;

 private:
  RunTable& runs_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_LAUNCHER_HEAD_RECORDING_HEAD_ACTIONS_H_
