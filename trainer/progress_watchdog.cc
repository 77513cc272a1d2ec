#include "trainer/progress_watchdog.h"

#include <utility>

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
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ProgressWatchdog::Pet() { last_pet_ns_.store(NowNs()); }

void ProgressWatchdog::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, poll_, [this] { return stop_; });
    if (stop_ || fired_.load()) continue;
    const auto idle = std::chrono::nanoseconds(NowNs() - last_pet_ns_.load());
    if (idle >= limit_) {
      fired_.store(true);
      lock.unlock();
      on_stall_(std::chrono::duration_cast<std::chrono::milliseconds>(idle));
      lock.lock();
    }
  }
}

}  // namespace trainer
}  // namespace tunefleet
