#include "launcher/head/ended_runs.h"

#include <utility>

#include "comm/codec.h"

namespace tunefleet {
namespace launcher {

void EndedRuns::Add(comm::HeldRun held, const comm::Exit& exit, absl::Time now, bool welcomed) {
  Ended ended{std::move(held), now};
  ended.held.set_ended(true);
  *ended.held.mutable_exit() = exit;
  ended_.push_back(std::move(ended));
  while (ended_.size() > kKeptExits ||
         (!ended_.empty() && welcomed && now - ended_.front().at > kKeepExitsFor)) {
    ended_.pop_front();
  }
}

void EndedRuns::AddToRegister(comm::Envelope& envelope) const {
  size_t used = envelope.ByteSizeLong();
  std::vector<const comm::HeldRun*> newest_first;
  for (auto it = ended_.rbegin(); it != ended_.rend(); ++it) {
    const size_t size = it->held.ByteSizeLong() + 8;
    if (used + size > comm::kMaxFrameBytes * 3 / 4) break;
    used += size;
    newest_first.push_back(&it->held);
  }
  comm::Register* r = envelope.mutable_register_();
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) *r->add_runs() = **it;
}

std::vector<comm::Exit> EndedRuns::ExitsSince(absl::Time since) const {
  std::vector<comm::Exit> exits;
  for (const Ended& ended : ended_) {
    if (ended.at >= since) exits.push_back(ended.held.exit());
  }
  return exits;
}

}  // namespace launcher
}  // namespace tunefleet
