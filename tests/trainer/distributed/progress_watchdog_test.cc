// trainer/distributed/progress_watchdog.h with real time: petted more often than its limit it never
// fires; left alone it fires once, after the limit and well before twice the limit, reporting the
// idle time; destruction stops it promptly.
#include "trainer/distributed/progress_watchdog.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

using std::chrono::milliseconds;

TEST(ProgressWatchdog, PettedNeverFires) {
  std::atomic<int> fired{0};
  {
    ProgressWatchdog dog(
        milliseconds(300), [&](milliseconds) { ++fired; }, milliseconds(20));
    for (int i = 0; i < 20; ++i) {
      std::this_thread::sleep_for(milliseconds(50));
      dog.Pet();
    }
  }
  EXPECT_EQ(fired.load(), 0);
}

TEST(ProgressWatchdog, FiresOnceAfterTheLimit) {
  std::atomic<int> fired{0};
  std::atomic<int64_t> idle_ms{0};
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int64_t> at_ms{0};
  ProgressWatchdog dog(
      milliseconds(300),
      [&](milliseconds idle) {
        ++fired;
        idle_ms = idle.count();
        at_ms = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start)
                    .count();
      },
      milliseconds(20));
  std::this_thread::sleep_for(milliseconds(1000));
  EXPECT_EQ(fired.load(), 1);
  EXPECT_TRUE(dog.fired());
  EXPECT_GE(idle_ms.load(), 300);
  EXPECT_GE(at_ms.load(), 300);
  EXPECT_LT(at_ms.load(), 600);
}

TEST(ProgressWatchdog, StopsPromptly) {
  const auto start = std::chrono::steady_clock::now();
  {
    ProgressWatchdog dog(
        milliseconds(10000), [](milliseconds) {}, milliseconds(5000));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
