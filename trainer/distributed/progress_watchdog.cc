#include "trainer/distributed/progress_watchdog.h"

#include <utility>

#include "absl/time/time.h"

namespace tunefleet {
namespace trainer {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ProgressWatchdog::ProgressWatchdog(std::chrono::milliseconds limit,
                                   std::function<void(std::chrono::milliseconds)> on_stall,
                                   std::chrono::milliseconds poll)
    : limit_(limit), poll_(poll), on_stall_(std::move(on_stall)), last_pet_ns_(NowNs()) {
  thread_ = std::thread([this] { Run(); });
}

ProgressWatchdog::~ProgressWatchdog() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;  // wakes Run()'s AwaitWithTimeout
  }
  thread_.join();
}

void ProgressWatchdog::Pet() { last_pet_ns_.store(NowNs()); }

void ProgressWatchdog::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::FromChrono(poll_));
      if (stop_) return;
    }
    if (fired_.load()) continue;
    const auto idle = std::chrono::nanoseconds(NowNs() - last_pet_ns_.load());
    if (idle >= limit_) {
      fired_.store(true);
      on_stall_(std::chrono::duration_cast<std::chrono::milliseconds>(idle));
    }
  }
}

}  // namespace trainer
}  // namespace tunefleet
