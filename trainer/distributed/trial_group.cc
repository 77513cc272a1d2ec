#include "trainer/distributed/trial_group.h"

#include <cstdint>
#include <mutex>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kNone[] = "none";
constexpr char kOffersKey[] = "tunefleet/kept_group";
constexpr char kIdKey[] = "tunefleet/group_id";

// The group a warm worker keeps between trials, and what it offers for it (but its rank).
struct Kept {
  std::unique_ptr<comm::ProcessGroup> group;
  std::string id;
  std::string offer;
};

std::mutex g_mu;
bool g_keep = false;
Kept g_kept;

// "ID:WORLD:BACKEND:TIMEOUT_MS": a kept group fits a trial only with all of these the same.
std::string OfferFor(const std::string& id, const comm::DistEnv& env,
                     comm::ProcessGroup::Backend backend, std::chrono::milliseconds timeout) {
  return absl::StrCat(id, ":", env.world_size, ":", comm::ProcessGroup::BackendName(backend), ":",
                      timeout.count());
}

std::string NewGroupId() {
  std::random_device device;
  const uint64_t id = (static_cast<uint64_t>(device()) << 32) ^ device();
  return absl::StrFormat("%016x", id);
}

double SecondsSince(absl::Time start) { return absl::ToDoubleSeconds(absl::Now() - start); }

}  // namespace

void KeepTrialGroups(bool on) {
  std::unique_ptr<comm::ProcessGroup> dropped;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_keep = on;
    if (!on) {
      dropped = std::move(g_kept.group);
      g_kept = Kept();
    }
  }
  // Destroyed unlocked: not shut down, so aborted (comm/process_group.h), without waiting.
}

bool TrialGroup::OffersAgree(const std::vector<std::string>& offers) {
  std::string base;
  for (size_t r = 0; r < offers.size(); ++r) {
    const size_t at = offers[r].rfind('@');
    int rank = -1;
    if (at == std::string::npos || at == 0 || !absl::SimpleAtoi(offers[r].substr(at + 1), &rank) ||
        rank != static_cast<int>(r)) {
      return false;
    }
    const std::string group = offers[r].substr(0, at);
    if (r == 0) base = group;
    if (group != base) return false;
  }
  return !offers.empty();
}

absl::StatusOr<std::unique_ptr<TrialGroup>> TrialGroup::Open(const comm::DistEnv& env,
                                                             comm::ProcessGroup::Backend backend,
                                                             std::chrono::milliseconds timeout) {
  const absl::Time start = absl::Now();
  std::unique_ptr<TrialGroup> t(new TrialGroup());
  absl::StatusOr<std::unique_ptr<comm::Rendezvous>> rendezvous =
      comm::Rendezvous::Connect(env, timeout);
  if (!rendezvous.ok()) return rendezvous.status();
  t->rendezvous_ = std::move(*rendezvous);
  const std::string name =
      absl::StrCat(comm::ProcessGroup::BackendName(backend), ", ", env.world_size, " ranks: ");
  Kept kept;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    kept = std::move(g_kept);
    g_kept = Kept();
  }
  // Each rank offers its kept group at the rank it has in that group: reused only where that is
  // its rank in this trial too. Every rank runs the same exchanges, kept group or not, warm worker
  // or fresh process: a trial may mix them (an agent without warm workers), and a rank that skipped
  // one would leave its peers waiting for its key.
  const bool fits = kept.group != nullptr && kept.offer == OfferFor(kept.id, env, backend, timeout);
  absl::StatusOr<std::vector<std::string>> offers = t->rendezvous_->Exchange(
      kOffersKey, fits ? absl::StrCat(kept.offer, "@", kept.group->rank()) : kNone);
  if (!offers.ok()) return offers.status();
  if (fits && OffersAgree(*offers)) {
    t->group_ = std::move(kept.group);
    t->id_ = kept.id;
    t->offer_ = kept.offer;
    t->reused_ = true;
    t->description_ =
        absl::StrFormat("%sthe workers' group from their previous trial, reused (agreed in %.3f s)",
                        name, SecondsSince(start));
    return t;
  }
  const std::string dropped =
      kept.group != nullptr ? "; this worker's previous group dropped: its peers differ" : "";
  kept.group.reset();  // aborted, without waiting for its peers
  absl::StatusOr<std::unique_ptr<comm::ProcessGroup>> joined =
      comm::ProcessGroup::Join(*t->rendezvous_, backend, timeout);
  if (!joined.ok()) return joined.status();
  t->group_ = std::move(*joined);
  absl::StatusOr<std::vector<std::string>> ids =
      t->rendezvous_->Exchange(kIdKey, env.rank == 0 ? NewGroupId() : "");
  if (!ids.ok()) return ids.status();
  t->id_ = (*ids)[0];
  t->offer_ = OfferFor(t->id_, env, backend, timeout);
  // The first collective sets NCCL's communicators up: timed here rather than in the first step.
  if (absl::Status s = t->group_->Sync(); !s.ok()) return s;
  t->description_ =
      absl::StrFormat("%sa new group, connected in %.2f s%s", name, SecondsSince(start), dropped);
  return t;
}

absl::Status TrialGroup::Close() {
  if (closed_ || group_ == nullptr) return absl::OkStatus();
  closed_ = true;
  bool keep = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    keep = g_keep;
  }
  if (!keep) return group_->Shutdown();  // failed: aborted by the destructor
  if (absl::Status s = group_->Sync(); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(g_mu);
  g_kept.group = std::move(group_);
  g_kept.id = id_;
  g_kept.offer = offer_;
  return absl::OkStatus();
}

TrialGroup::~TrialGroup() = default;

}  // namespace trainer
}  // namespace tunefleet
