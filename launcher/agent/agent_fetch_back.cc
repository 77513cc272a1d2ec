#include "launcher/agent/agent_fetch_back.h"

#include <algorithm>
#include <chrono>
#include <future>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "comm/bulk_token.h"
#include "common/logging.h"
#include "launcher/agent/trial_guard.h"

namespace tunefleet {
namespace launcher {

bool AgentFetchBack::Offer(LocalRun& run, comm::Exit* exit) {
  const std::string& path = run.spec.fetch_back();
  if (path.empty() ||
      std::find(run.rank_ids.begin(), run.rank_ids.end(), 0) == run.rank_ids.end()) {
    return false;  // nothing asked, or rank 0 (which writes the output) ran elsewhere
  }
  if (absl::Status allowed = CheckTrialPath("fetch_back", path, allow_dirs_); !allowed.ok()) {
    exit->set_fetch_error(std::string(allowed.message()));
    return false;
  }
  if (bulk_ == nullptr) {
    absl::StatusOr<std::string> token = comm::NewBulkToken();
    absl::StatusOr<std::unique_ptr<comm::BulkServer>> started =
        token.ok() ? comm::BulkServer::Start(address_, 0, *token) : token.status();
    const std::string address = started.ok() ? (*started)->address() : "";
    if (!started.ok() || !absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port_)) {
      exit->set_fetch_error(absl::StrCat("cannot start this agent's bulk server: ",
                                         started.ok() ? address : started.status().message()));
      return false;
    }
    bulk_ = std::move(*started);
    token_ = *token;
  }
  // Hashing a model folder takes a while: off the loop, which goes on heartbeating.
  comm::BulkServer* server = bulk_.get();
  run.publishing = std::async(std::launch::async, [server, path] { return server->Publish(path); });
  return true;
}

bool AgentFetchBack::Finish(uint64_t run_id, LocalRun& run) {
  if (run.publishing.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  absl::StatusOr<std::string> hash = run.publishing.get();
  if (hash.ok()) {
    run.exit->set_fetch_hash(*hash);
    run.exit->set_fetch_port(port_);
    run.exit->set_fetch_token(token_);
    TF_LOG(INFO) << "run " << run_id << ": serving " << run.spec.fetch_back() << " ("
                 << hash->substr(0, 12) << ") for the head on port " << port_;
  } else {
    run.exit->set_fetch_error(std::string(hash.status().message()));
  }
  return true;
}

}  // namespace launcher
}  // namespace tunefleet
