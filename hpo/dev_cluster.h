// Single-node dev mode: `hpo sweep` without --head starts a head and one local agent as child
// processes and stops them when the sweep ends. Both die with hpo if hpo is killed
// (PR_SET_PDEATHSIG), and the agent's trainers die with the agent, so no process outlives the
// sweep.
//
// Files: a fresh private folder DEVDIR = RUNTIME/dev-PID (common/runtime_dir.h: 0700, this
// user's; dev-PID-2, ... when one of that name is left over) holds the head's socket
// (ipc://DEVDIR/head.sock) and the agent's runtime folder (DEVDIR/agent: its lock, its
// trainers' socket), so that two dev-mode sweeps never meet. When DEVDIR is too deep for a Unix
// socket path (108 bytes), the socket alone goes to a fresh private dev-PID folder under
// /tmp/tunefleet-UID, RuntimeDir()'s own fallback. Stop() removes both folders. The logs
// (head.log, agent.log, the trials' rank logs) go to Options::log_dir.
//
// Supervision (CheckAlive, which hpo calls every half second): a head or agent that died
// without being stopped is started again with the same arguments on the same endpoint, with
// one line on `out` ("dev mode: the local head was killed by signal 9 (Killed); restarted it on
// ipc://..."). The cluster's own recovery does the rest:
//   - a new head: the agent keeps its runs (--head_grace_s) and registers again, listing them;
//     the head adopts them; hpo registers again and submits its unfinished trials, which the
//     head hands back (hpo's head_grace must not be zero);
//   - a new agent: the old one's trainers died with it; it is started once the head must have
//     declared the old one lost (liveness x heartbeat, plus one heartbeat), so the new one is
//     not refused under the same name; the head fails the old runs ("agent local lost") and
//     hpo retries those trials as failed attempts.
// More than max_restarts deaths of one process within restart_window is a crash loop:
// CheckAlive then fails, as it does without restarts, with the reason and the end of the log.
// Thread-safety: owned by hpo's main thread (the one that must outlive the children: the
// parent-death signal follows the thread that started them).
#ifndef TUNEFLEET_HPO_DEV_CLUSTER_H_
#define TUNEFLEET_HPO_DEV_CLUSTER_H_

#include <cstdint>
#include <deque>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/child_process.h"

namespace tunefleet {
namespace hpo {

class DevCluster {
 public:
  struct Options {
    int64_t slots = 1;  // agent --slots: CPU slots, or a cap on the GPUs it uses
    // agent --prewarm_workers: warm workers started before the first trial; 0: none.
    int64_t prewarm_workers = 0;
    bool prewarm_mps = false;  // agent --prewarm_mps: trials will share GPUs
    // agent --allow_env: the variables the sweep's resources.env names.
    std::vector<std::string> allow_env;
    // agent --allow_dir: folders the trials write in beside log_dir (the sweep's run folder,
    // where a program's trial folders are made).
    std::vector<std::string> allow_dirs;
    std::string log_dir;  // head.log and agent.log go here (the agent's --log_dir)
    absl::Duration heartbeat = absl::Milliseconds(500);
    // How long the agent keeps its runs going without a head (agent --head_grace_s).
    absl::Duration agent_head_grace = absl::Minutes(5);
    // Restarts of one process allowed within restart_window; 0: none (a death fails the sweep).
    int max_restarts = 5;
    absl::Duration restart_window = absl::Minutes(1);
    // Where the restart lines go (hpo's stdout); null: nowhere.
    std::ostream* out = &std::cout;
  };
  static absl::StatusOr<std::unique_ptr<DevCluster>> Start(const Options& options);
  ~DevCluster();

  const std::string& endpoint() const { return endpoint_; }
  // The private folder (DEVDIR above); empty once stopped.
  const std::string& dir() const { return dir_; }
  // OK while both run, or while one that died is being restarted; else which one exited, how,
  // and the end of its log (a crash loop, or a restart that failed).
  absl::Status CheckAlive();
  // Stops the agent (which stops its trainers), then the head, and removes the private
  // folders. Nothing is restarted after. Idempotent.
  void Stop();

 private:
  struct Member {
    const char* name = "";  // "head" or "agent"
    ProcessSpec spec;
    std::string log;
    std::unique_ptr<ChildProcess> process;
    absl::Time started_at;
    std::deque<absl::Time> deaths;                   // within restart_window
    absl::Time restart_at = absl::InfiniteFuture();  // set while dead, awaiting its restart
    std::string how;  // how the last one ended ("was killed by signal 9 (Killed)")
  };
  DevCluster() = default;
  absl::Status Supervise(Member& m, absl::Time now);

  Options options_;
  std::string dir_;
  std::string socket_dir_;  // dir_, or the short folder holding head.sock
  std::string endpoint_;
  Member head_, agent_;
  absl::Status failure_;  // once CheckAlive failed, it keeps failing
  bool stopped_ = false;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_DEV_CLUSTER_H_
