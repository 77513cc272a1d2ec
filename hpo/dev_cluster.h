// Single-node dev mode: `hpo sweep` without --head starts a head and one local agent as child
// processes, talking over an ipc:// endpoint in a private temporary folder, and stops them when
// the sweep ends. Both die with hpo if hpo is killed (PR_SET_PDEATHSIG), and the agent's
// trainers die with the agent, so no process outlives the sweep.
// Thread-safety: owned by hpo's main thread (the one that must outlive the children).
#ifndef TUNEFLEET_HPO_DEV_CLUSTER_H_
#define TUNEFLEET_HPO_DEV_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "launcher/child_process.h"

namespace tunefleet {
namespace hpo {

class DevCluster {
 public:
  struct Options {
    int64_t slots = 1;    // agent --slots: CPU slots, or a cap on the GPUs it uses
    std::string log_dir;  // head.log and agent.log go here
    absl::Duration heartbeat = absl::Milliseconds(500);
  };
  static absl::StatusOr<std::unique_ptr<DevCluster>> Start(const Options& options);
  ~DevCluster();

  const std::string& endpoint() const { return endpoint_; }
  // OK while both run; else which one exited, how, and the end of its log.
  absl::Status CheckAlive();
  // Stops the agent (which stops its trainers), then the head. Idempotent.
  void Stop();

 private:
  DevCluster() = default;
  std::string dir_;
  std::string endpoint_;
  std::string head_log_, agent_log_;
  std::unique_ptr<launcher::ChildProcess> head_, agent_;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_DEV_CLUSTER_H_
