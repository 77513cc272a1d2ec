// A watchdog on the training loop of a data-parallel rank: the loop calls Pet() after every
// step (and around evaluations and checkpoints); if none comes for `limit`, `on_stall` runs on
// the watchdog's thread. The trainer sets the limit a little under train.ddp_timeout_s (10%, at
// least 1 s) and its handler prints one line and ends the process, so a rank whose peer stalled
// or died leaves within the timeout whatever its backend does (NCCL's own watchdog notices at
// the timeout but then held the process about a minute more on the 2xH200 host).
// Thread-safety: Pet() from any thread; the destructor stops the watchdog's thread.
#ifndef TUNEFLEET_TRAINER_DISTRIBUTED_PROGRESS_WATCHDOG_H_
#define TUNEFLEET_TRAINER_DISTRIBUTED_PROGRESS_WATCHDOG_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tunefleet {
namespace trainer {

class ProgressWatchdog {
 public:
  // `on_stall` receives the time since the last Pet(); it runs at most once.
  ProgressWatchdog(std::chrono::milliseconds limit,
                   std::function<void(std::chrono::milliseconds)> on_stall,
                   std::chrono::milliseconds poll = std::chrono::milliseconds(200));
  ~ProgressWatchdog();
  ProgressWatchdog(const ProgressWatchdog&) = delete;
  ProgressWatchdog& operator=(const ProgressWatchdog&) = delete;

  void Pet();
  bool fired() const { return fired_.load(); }

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);

  const std::chrono::milliseconds limit_, poll_;
  std::function<void(std::chrono::milliseconds)> on_stall_;
  std::atomic<int64_t> last_pet_ns_;
  std::atomic<bool> fired_{false};
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DISTRIBUTED_PROGRESS_WATCHDOG_H_
