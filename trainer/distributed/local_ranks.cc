#include "trainer/distributed/local_ranks.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "comm/endpoint.h"
#include "common/child_process.h"
#include "common/cli.h"
#include "common/rank_env.h"
#include "common/signals.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr std::chrono::milliseconds kPoll{50};

using Ranks = std::vector<std::unique_ptr<ChildProcess>>;

// Reaps what has ended; the first rank that ended badly (one killed by a signal before one
// that exited, within one pass: the others usually exit because it is gone), or -1.
int Reap(const Ranks& ranks) {
  int found = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    ChildProcess& r = *ranks[i];
    if (r.exited() || !r.Reap() || r.succeeded()) continue;
    if (found < 0 || (r.term_signal() != 0 && ranks[found]->term_signal() == 0)) {
      found = static_cast<int>(i);
    }
  }
  return found;
}

bool AnyRunning(const Ranks& ranks) {
  for (const auto& r : ranks) {
    if (!r->exited()) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> RankGpus(int ranks, const std::vector<int64_t>& gpu_ids,
                                  const std::vector<std::string>& visible) {
  std::vector<std::string> out;
  if (visible.empty()) return out;
  for (int i = 0; i < ranks; ++i) {
    const size_t index = gpu_ids.empty() ? static_cast<size_t>(i) : static_cast<size_t>(gpu_ids[i]);
    out.push_back(index < visible.size() ? visible[index] : std::to_string(index));
  }
  return out;
}

int RunLocalRanks(const LocalRanksSpec& spec, const std::string& program) {
  absl::StatusOr<int> port = comm::FreeTcpPort("127.0.0.1");
  if (!port.ok()) {
    PrintError(program, port.status());
    return kExitFailure;
  }
  const SignalLatch signals({SIGINT, SIGTERM, SIGHUP});
  const bool set_omp = spec.omp_threads > 0 && std::getenv("OMP_NUM_THREADS") == nullptr;
  Ranks ranks;
  absl::Status failed;
  for (int i = 0; i < spec.ranks; ++i) {
    ProcessSpec ps;
    ps.binary = spec.binary;
    ps.args = spec.args;
    ps.inherit_stdio = true;
    RankPlace place;  // one machine: each rank's local rank is its rank
    place.rank = place.local_rank = i;
    place.world_size = place.local_world_size = spec.ranks;
    place.master_addr = "127.0.0.1";
    place.master_port = *port;
    ps.env = TorchrunEnv(place);
    ps.env[kLocalRanksEnv] = "1";
    if (static_cast<size_t>(i) < spec.cuda_visible_devices.size()) {
      ps.env["CUDA_VISIBLE_DEVICES"] = spec.cuda_visible_devices[i];
    }
    if (set_omp) ps.env["OMP_NUM_THREADS"] = std::to_string(spec.omp_threads);
    absl::StatusOr<std::unique_ptr<ChildProcess>> rank = ChildProcess::Start(ps);
    if (!rank.ok()) {
      failed = absl::Status(rank.status().code(),
                            absl::StrCat("starting rank ", i, ": ", rank.status().message()));
      break;
    }
    ranks.push_back(std::move(*rank));
  }

  int culprit = -1;
  while (failed.ok() && signals.last() == 0 && culprit < 0 && AnyRunning(ranks)) {
    std::this_thread::sleep_for(kPoll);
    culprit = Reap(ranks);
  }
  const int interrupted = signals.last();
  // SIGTERM to every rank's process group, SIGKILL after the grace or at a second signal.
  const int signals_before = signals.count();
  std::vector<ChildProcess*> all;
  for (const auto& r : ranks) all.push_back(r.get());
  StopAll(all, absl::FromChrono(spec.grace), [&] { return signals.count() != signals_before; });

  if (!failed.ok()) {
    PrintError(program, failed);
    return kExitFailure;
  }
  if (interrupted != 0) {
    PrintError(program, absl::CancelledError(absl::StrCat("interrupted by signal ", interrupted,
                                                          " (", strsignal(interrupted),
                                                          "): ended the ", spec.ranks, " ranks")));
    return 128 + interrupted;
  }
  if (culprit >= 0) {
    const ChildProcess& r = *ranks[culprit];
    PrintError(program, absl::InternalError(
                            absl::StrCat("rank ", culprit, " (pid ", r.pid(), ") ", r.HowItEnded(),
                                         spec.ranks > 1 ? "; ended the other ranks" : "")));
    return r.ShellExitCode();
  }
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
