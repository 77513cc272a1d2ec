#include "launcher/head/fetch_backs.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "launcher/head/head_staging.h"

namespace tunefleet {
namespace launcher {

void FetchBacks::Start(const RunRecord& run, const Peer* agent, const comm::Exit& exit) {
  if (!exit.fetch_error().empty() || agent == nullptr) {
    TF_LOG(WARNING) << "run " << run.run_id << " (trial " << run.spec.trial()
                    << "): " << run.spec.fetch_back() << " not fetched back: "
                    << (exit.fetch_error().empty() ? "its agent left" : exit.fetch_error());
    return;
  }
  const std::string server = absl::StrCat(agent->address, ":", exit.fetch_port());
  pending_[run.run_id] = std::async(std::launch::async, FetchBack, server, exit.fetch_hash(),
                                    exit.fetch_token(), run.spec.fetch_back());
}

std::vector<FetchBacks::Finished> FetchBacks::TakeFinished() {
  std::vector<uint64_t> done;
  for (auto& [id, pending] : pending_) {
    if (pending.wait_for(std::chrono::seconds(0)) == std::future_status::ready) done.push_back(id);
  }
  std::vector<Finished> finished;
  finished.reserve(done.size());
  for (uint64_t id : done) {
    finished.push_back({id, pending_[id].get()});
    pending_.erase(id);
  }
  return finished;
}

}  // namespace launcher
}  // namespace tunefleet
