// Data-parallel tests in one test binary: RunForkedRanks(n, body) forks n processes, each of
// which joins a Gloo process group of n ranks over loopback (a free port, rank 0 serving the
// TCPStore) and runs body(group); the child exits with body's return value, and the parent
// gets every rank's exit status.
//
//   const std::vector<int> codes = RunForkedRanks(2, [](comm::ProcessGroup& g) {
//     ...;            // collectives, checks that print what differs to stderr
//     return failures;  // 0: this rank passed
//   });
//   EXPECT_EQ(codes, std::vector<int>(2, 0));
//
// A child reports through its exit code and stderr, not gtest (its assertions would not reach
// the parent): kFailedToJoin when it could not join the group, 128 + N when signal N killed it,
// kTimedOut when the parent killed it after `timeout`. Call it before the test process uses
// LibTorch's thread pools (fork copies no threads).
// Thread-safety: call from one thread; it blocks until every child has ended.
#ifndef TUNEFLEET_TESTS_TEST_UTIL_FORKED_RANKS_H_
#define TUNEFLEET_TESTS_TEST_UTIL_FORKED_RANKS_H_

#include <chrono>
#include <functional>
#include <vector>

#include "comm/process_group.h"

namespace tunefleet {

inline constexpr int kFailedToJoin = 101;
inline constexpr int kTimedOut = 102;

std::vector<int> RunForkedRanks(int world, const std::function<int(comm::ProcessGroup&)>& body,
                                std::chrono::seconds timeout = std::chrono::seconds(120));

}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_TEST_UTIL_FORKED_RANKS_H_
