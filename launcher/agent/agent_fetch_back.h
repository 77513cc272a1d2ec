// The agent's side of fetch-back (TrialSpec.fetch_back; the head's side:
// launcher/head/fetch_backs.h): once a run that asked for it has completed or stopped here with
// rank 0 (which writes the output), the agent hashes the folder (on a thread: the loop goes on
// heartbeating) and serves it on its own UCX bulk server, started on first use; the run's Exit then
// names the hash and port (Exit.fetch_hash, fetch_port) and the server's token (Exit.fetch_token: a
// random one made when the server starts, comm/bulk_token.h; only the head, told over the control
// plane, can fetch) or why there is nothing to fetch (Exit.fetch_error). The folder must lie in the
// folders the agent serves (launcher/agent/trial_guard.h).
// Thread-safety: owned by the agent's poll loop; the hashing threads touch only the server.
#ifndef TUNEFLEET_LAUNCHER_AGENT_AGENT_FETCH_BACK_H_
#define TUNEFLEET_LAUNCHER_AGENT_AGENT_FETCH_BACK_H_

#include <memory>
#include <string>
#include <vector>

#include "comm/bulk_server.h"
#include "comm/proto/messages.pb.h"
#include "launcher/agent/local_run.h"

namespace tunefleet {
namespace launcher {

class AgentFetchBack {
 public:
  // `address`: the IP the bulk server listens on; `allow_dirs`: where a fetch_back may lie.
  AgentFetchBack(std::string address, std::vector<std::string> allow_dirs)
      : address_(std::move(address)), allow_dirs_(std::move(allow_dirs)) {}

  // Starts publishing the run's fetch_back path (run.publishing); false when there is none to
  // offer (`exit` then says why, if it failed).
  bool Offer(LocalRun& run, comm::Exit* exit);
  // Once the run's publishing has finished: completes run.exit with the hash and port (or the
  // error) and returns true; false while the folder is still being hashed.
  bool Finish(uint64_t run_id, LocalRun& run);

 private:
  std::string address_;
  std::vector<std::string> allow_dirs_;
  std::unique_ptr<comm::BulkServer> bulk_;
  int port_ = 0;
  std::string token_;  // bulk_'s
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_AGENT_FETCH_BACK_H_
