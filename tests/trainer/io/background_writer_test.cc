// trainer/io/background_writer.h: jobs run off the calling thread, one at a time and in order; a
// failed job's error comes back from the next Start (which then does not run its job) or Wait;
// the destructor waits for the job in flight.
#include "trainer/io/background_writer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

using std::chrono::milliseconds;

TEST(BackgroundWriter, RunsOffThreadOneAtATimeInOrder) {
  BackgroundWriter w;
  std::vector<int> order;
  std::atomic<int> running{0}, most{0};
  const auto caller = std::this_thread::get_id();
  bool off_thread = true;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(w.Start([&, i] {
                   const int now = ++running;
                   most = std::max(most.load(), now);
                   off_thread = off_thread && std::this_thread::get_id() != caller;
                   std::this_thread::sleep_for(milliseconds(20));
                   order.push_back(i);
                   --running;
                   return absl::OkStatus();
                 }).ok());
    EXPECT_TRUE(w.busy());
  }
  ASSERT_TRUE(w.Wait().ok());
  EXPECT_FALSE(w.busy());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(most.load(), 1);
  EXPECT_TRUE(off_thread);
}

TEST(BackgroundWriter, StartReturnsTheCallerAtOnce) {
  BackgroundWriter w;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(w.Start([] {
                 std::this_thread::sleep_for(milliseconds(300));
                 return absl::OkStatus();
               }).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(200));
  ASSERT_TRUE(w.Wait().ok());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(300));
}

TEST(BackgroundWriter, AFailedJobsErrorComesBackAndStopsTheNext) {
  BackgroundWriter w;
  ASSERT_TRUE(w.Start([] { return absl::DataLossError("disk full"); }).ok());
  bool ran = false;
  const absl::Status s = w.Start([&] {
    ran = true;
    return absl::OkStatus();
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "disk full");
  EXPECT_TRUE(w.Wait().ok());
  EXPECT_FALSE(ran);
  ASSERT_TRUE(w.Start([]() -> absl::Status { throw std::runtime_error("boom"); }).ok());
  EXPECT_EQ(w.Wait().message(), "background write failed: boom");
}

TEST(BackgroundWriter, DestructorWaits) {
  std::atomic<bool> done{false};
  {
    BackgroundWriter w;
    ASSERT_TRUE(w.Start([&] {
                   std::this_thread::sleep_for(milliseconds(100));
                   done = true;
                   return absl::OkStatus();
                 }).ok());
  }
  EXPECT_TRUE(done.load());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
