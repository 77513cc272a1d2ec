// Warm trainer workers through a real agent process: the test plays the head (a ROUTER the agent
// registers with) and the trainer is tests/launcher/agent/fake_trainer, so trials, workers, their
// processes and sockets are real. Args: the agent binary, the fake trainer.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

extern char** environ;

namespace tunefleet {
namespace launcher {
namespace {

std::string g_agent, g_trainer;

using comm::Envelope;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AgentWarmTest : public ::testing::Test {
 protected:
  AgentWarmTest() : sockets_("warm"), router_(context_, zmq::socket_type::router) {}

  void SetUp() override {
    logs_ = FreshTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    comm::ConfigureSocket(router_, /*router=*/true);
    router_.bind("tcp://127.0.0.1:*");
    std::vector<std::string> args = {g_agent,
                                     "--head",
                                     comm::LastEndpoint(router_),
                                     "--slots",
                                     "1",
                                     "--name",
                                     "a",
                                     "--trainer",
                                     g_trainer,
                                     "--runtime_dir",
                                     sockets_.path() + "/rt",
                                     "--log_dir",
                                     logs_,
                                     "--kill_grace_ms",
                                     "500"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, (logs_ + "/agent.log").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_EQ(posix_spawn(&agent_pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    std::optional<Envelope> reg = Receive(absl::Seconds(10));
    ASSERT_TRUE(reg.has_value() && reg->has_register_()) << AgentLog();
    Envelope welcome;
    welcome.mutable_welcome()->set_session("test-head");
    welcome.mutable_welcome()->set_heartbeat_interval_ms(1000);
    Send(welcome);
  }

  void TearDown() override {
    if (agent_pid_ > 0) {
      ::kill(agent_pid_, SIGTERM);
      int status = 0;
      ::waitpid(agent_pid_, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << AgentLog();
    }
    // Every worker the agent started has exited with it.
    const std::string log = AgentLog();
    for (size_t at = log.find("(pid "); at != std::string::npos; at = log.find("(pid ", at + 1)) {
      const pid_t pid = std::atoi(log.c_str() + at + 5);
      if (pid > 0) {
        EXPECT_NE(::kill(pid, 0), 0) << "pid " << pid << " outlived the agent";
      }
    }
  }

  std::string AgentLog() const { return ReadFile(logs_ + "/agent.log"); }

  void Send(const Envelope& envelope) {
    ASSERT_TRUE(comm::SendTo(router_, identity_, envelope).ok());
  }

  // The agent's next message that is not a heartbeat; the test heartbeats meanwhile.
  std::optional<Envelope> Receive(absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      zmq::pollitem_t item = {static_cast<void*>(router_), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      if (!identity_.empty() && absl::Now() >= next_beat_) {
        Envelope hb;
        hb.mutable_heartbeat();
        Send(hb);
        next_beat_ = absl::Now() + absl::Milliseconds(200);
      }
      while (auto received = comm::TryReceive(router_, /*router=*/true)) {
        if (!received->envelope.ok()) continue;
        identity_ = received->identity;
        if (received->envelope->has_heartbeat()) continue;
        return *std::move(received->envelope);
      }
    }
    return std::nullopt;
  }

  struct Result {
    comm::Started started;
    comm::Exit exit;
    int reports = 0;
  };

  // Assigns a one-rank trial (argv "train --config CONFIG ARGS...") and waits for its end.
  Result RunTrial(int64_t trial, const std::string& config, std::vector<std::string> args,
                  bool reuse = true, int max_trials = 0, const std::string& cancel_after = "") {
    Envelope assign;
    comm::TrialSpec* spec = assign.mutable_assign()->mutable_trial();
    spec->set_run_id(static_cast<uint64_t>(100 + trial));
    spec->set_trial(trial);
    spec->set_sweep("warm");
    spec->set_world_size(1);
    spec->add_argv("train");
    spec->add_argv("--config");
    spec->add_argv(config);
    for (const std::string& a : args) spec->add_argv(a);
    spec->set_reuse_worker(reuse);
    spec->set_worker_max_trials(max_trials);
    assign.mutable_assign()->add_ranks(0);
    Send(assign);
    Result result;
    while (std::optional<Envelope> e = Receive()) {
      if (e->has_started()) {
        result.started = e->started();
        if (!cancel_after.empty()) {
          // Let the trial begin in its worker, then cancel it.
          absl::SleepFor(absl::Milliseconds(500));
          Envelope cancel;
          cancel.mutable_cancel()->set_run_id(spec->run_id());
          cancel.mutable_cancel()->set_reason(cancel_after);
          Send(cancel);
        }
      } else if (e->has_report()) {
        ++result.reports;
        Envelope decision;
        decision.mutable_decision()->set_run_id(spec->run_id());
        decision.mutable_decision()->set_step(e->report().step());
        Send(decision);
      } else if (e->has_exit()) {
        result.exit = e->exit();
        return result;
      }
    }
    ADD_FAILURE() << "no Exit for trial " << trial << "; agent log:\n" << AgentLog();
    return result;
  }

  std::string TrialLog(int64_t trial) const {
    return ReadFile(absl::StrCat(logs_, "/warm/trial-", trial, "/rank-0.log"));
  }

  zmq::context_t context_{1};
  ShortTempDir sockets_;
  zmq::socket_t router_;
  std::string identity_;
  absl::Time next_beat_ = absl::InfinitePast();
  std::string logs_;
  pid_t agent_pid_ = -1;
};

std::string WorkerName(int pid, int n) { return absl::StrCat("a/slot-0/w-", pid, "#", n); }

TEST_F(AgentWarmTest, ThreeTrialsReuseOneWorker) {
  int pid = 0;
  for (int t = 1; t <= 3; ++t) {
    Result r = RunTrial(t, "c.yaml", {"report=1"});
    ASSERT_EQ(r.started.pids_size(), 1);
    ASSERT_EQ(r.started.workers_size(), 1);
    if (t == 1) pid = r.started.pids(0);
    EXPECT_EQ(r.started.pids(0), pid);
    EXPECT_EQ(r.started.workers(0), WorkerName(pid, t));
    EXPECT_EQ(r.exit.outcome(), comm::Exit::COMPLETED) << r.exit.DebugString() << AgentLog();
    EXPECT_EQ(r.reports, 1);
    EXPECT_NE(TrialLog(t).find("decision received"), std::string::npos) << TrialLog(t);
    EXPECT_NE(TrialLog(t).find(
                  absl::StrCat("fake trial ", t, " run ", 100 + t, " pid ", pid, " config c.yaml")),
              std::string::npos)
        << TrialLog(t);
  }
}

TEST_F(AgentWarmTest, KeyChangeAndMaxTrialsRecycle) {
  Result a = RunTrial(1, "a.yaml", {});
  Result b = RunTrial(2, "b.yaml", {}, true, 2);  // another --config: another worker
  EXPECT_NE(b.started.pids(0), a.started.pids(0));
  EXPECT_EQ(b.started.workers(0), WorkerName(b.started.pids(0), 1));
  Result c = RunTrial(3, "b.yaml", {"lr=0.1"}, true, 2);  // other overrides: the same key
  EXPECT_EQ(c.started.pids(0), b.started.pids(0));
  EXPECT_EQ(c.started.workers(0), WorkerName(b.started.pids(0), 2));
  Result d = RunTrial(4, "b.yaml", {}, true, 2);  // the worker ran its 2 trials
  EXPECT_NE(d.started.pids(0), c.started.pids(0));
  EXPECT_EQ(d.started.workers(0), WorkerName(d.started.pids(0), 1));
  for (const Result* r : {&a, &b, &c, &d}) {
    EXPECT_EQ(r->exit.outcome(), comm::Exit::COMPLETED) << r->exit.DebugString();
  }
}

TEST_F(AgentWarmTest, WorkerKilledMidTrialFailsThatTrialAlone) {
  Result ok = RunTrial(1, "c.yaml", {});
  Result killed = RunTrial(2, "c.yaml", {"die=1"});
  EXPECT_EQ(killed.started.pids(0), ok.started.pids(0));
  EXPECT_EQ(killed.exit.outcome(), comm::Exit::FAILED);
  EXPECT_EQ(killed.exit.signal(), SIGKILL);
  EXPECT_NE(killed.exit.reason().find("signal 9"), std::string::npos) << killed.exit.reason();
  EXPECT_NE(killed.exit.stderr_tail().find("fake trial 2"), std::string::npos)
      << killed.exit.stderr_tail();
  Result next = RunTrial(3, "c.yaml", {});
  EXPECT_NE(next.started.pids(0), ok.started.pids(0));
  EXPECT_EQ(next.started.workers(0), WorkerName(next.started.pids(0), 1));
  EXPECT_EQ(next.exit.outcome(), comm::Exit::COMPLETED) << next.exit.DebugString();
}

TEST_F(AgentWarmTest, NonZeroTrialDoneFailsWithItsTail) {
  Result oom = RunTrial(1, "c.yaml", {"exit=3"});
  EXPECT_EQ(oom.exit.outcome(), comm::Exit::FAILED);
  EXPECT_EQ(oom.exit.exit_code(), 3);
  EXPECT_EQ(oom.exit.reason(), "out of memory (rank 0)");
  EXPECT_EQ(oom.exit.stderr_tail(), "error: boom (from TrialDone)\n");
  Result failed = RunTrial(2, "c.yaml", {"exit=1"});  // the first worker retired
  EXPECT_NE(failed.started.pids(0), oom.started.pids(0));
  EXPECT_EQ(failed.exit.outcome(), comm::Exit::FAILED);
  EXPECT_EQ(failed.exit.reason(), "rank 0: exit code 1");
  Result ok = RunTrial(3, "c.yaml", {});
  EXPECT_EQ(ok.exit.outcome(), comm::Exit::COMPLETED);
  EXPECT_NE(ok.started.pids(0), failed.started.pids(0));
}

TEST_F(AgentWarmTest, CancelledTrialKillsItsWorker) {
  Result cancelled = RunTrial(1, "c.yaml", {"sleep_ms=20000"}, true, 0, "pruned by test");
  EXPECT_EQ(cancelled.exit.outcome(), comm::Exit::CANCELLED) << cancelled.exit.DebugString();
  EXPECT_EQ(cancelled.exit.reason(), "pruned by test");
  EXPECT_NE(::kill(cancelled.started.pids(0), 0), 0) << "the cancelled trial's worker lives on";
  Result next = RunTrial(2, "c.yaml", {});
  EXPECT_NE(next.started.pids(0), cancelled.started.pids(0));
  EXPECT_EQ(next.exit.outcome(), comm::Exit::COMPLETED);
}

TEST_F(AgentWarmTest, WithoutReuseEachTrialIsAFreshProcess) {
  Result a = RunTrial(1, "c.yaml", {"report=1"}, /*reuse=*/false);
  Result b = RunTrial(2, "c.yaml", {"exit=1"}, /*reuse=*/false);
  ASSERT_EQ(a.started.workers_size(), 1);
  EXPECT_EQ(a.started.workers(0), "");
  EXPECT_NE(a.started.pids(0), b.started.pids(0));
  EXPECT_EQ(a.exit.outcome(), comm::Exit::COMPLETED);
  EXPECT_EQ(a.reports, 1);
  EXPECT_EQ(b.exit.outcome(), comm::Exit::FAILED);
  EXPECT_NE(b.exit.stderr_tail().find("error: boom"), std::string::npos);
  EXPECT_EQ(AgentLog().find("warm worker"), std::string::npos);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 3) {
    std::cerr << "usage: agent_warm_test AGENT FAKE_TRAINER" << std::endl;
    return 2;
  }
  tunefleet::launcher::g_agent = argv[1];
  tunefleet::launcher::g_trainer = argv[2];
  return RUN_ALL_TESTS();
}
