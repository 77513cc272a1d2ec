// launcher::WarmWorkers on its own: keys, lending, the RunTrial queue, recycling, the register
// timeout, with time passed in and real (fake_trainer) processes that never register, the test
// registering for them. Arg: the fake trainer.
#include "launcher/agent/warm_workers.h"

#include <signal.h>
#include <sys/wait.h>

#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

std::string g_trainer;

comm::TrialSpec Spec(const std::vector<std::string>& argv, const std::string& sweep = "s") {
  comm::TrialSpec spec;
  spec.set_sweep(sweep);
  spec.set_world_size(1);
  spec.set_reuse_worker(true);
  for (const std::string& a : argv) spec.add_argv(a);
  return spec;
}

TEST(WarmWorkersKeyTest, SweepConfigAndEnvMakeTheKey) {
  const std::string key = WarmWorkers::Key(Spec({"train", "--config", "a.yaml", "lr=1"}), {});
  EXPECT_EQ(WarmWorkers::Key(Spec({"train", "--config=a.yaml", "lr=2"}), {}), key);
  EXPECT_NE(WarmWorkers::Key(Spec({"train", "--config", "b.yaml"}), {}), key);
  EXPECT_NE(WarmWorkers::Key(Spec({"train", "--config", "a.yaml"}, "t"), {}), key);
  EXPECT_NE(WarmWorkers::Key(Spec({"train", "--config", "a.yaml"}), {{"OMP_NUM_THREADS", "2"}}),
            key);
  // Each trial's hyperparameters (for TensorBoard) differ and are read per trial: they travel
  // in TrialSpec.params_json, never in the key.
  comm::TrialSpec with_params = Spec({"train", "--config", "a.yaml"});
  with_params.set_params_json("{\"lr\": 0.001}");
  EXPECT_EQ(WarmWorkers::Key(with_params, {}), key);
}

TEST(WarmWorkersKeyTest, AProgramNeverRunsInAWorker) {
  comm::Assign assign;
  *assign.mutable_trial() = Spec({"train", "--config", "a.yaml"});  // a program named "train"
  assign.mutable_trial()->mutable_program()->set_workdir("/w");
  assign.add_ranks(0);
  EXPECT_FALSE(WarmWorkers::Eligible(assign));
}

TEST(WarmWorkersKeyTest, TrainTrialsWithReuseAreEligibleWhateverTheirRanks) {
  comm::Assign assign;
  *assign.mutable_trial() = Spec({"train", "--config", "a.yaml"});
  assign.add_ranks(0);
  EXPECT_TRUE(WarmWorkers::Eligible(assign));
  comm::Assign other = assign;
  other.mutable_trial()->set_reuse_worker(false);
  EXPECT_FALSE(WarmWorkers::Eligible(other));
  // A multi-rank trial: each of its ranks runs in its slot's worker
  // (trainer/distributed/trial_group.h).
  other = assign;
  other.mutable_trial()->set_world_size(4);
  other.add_ranks(1);
  EXPECT_TRUE(WarmWorkers::Eligible(other));
  other = assign;
  other.mutable_trial()->set_argv(0, "eval");
  EXPECT_FALSE(WarmWorkers::Eligible(other));
}

class WarmWorkersTest : public ::testing::Test {
 protected:
  WarmWorkersTest() {
    WarmWorkers::Config config;
    config.agent = "a";
    config.trainer_binary = g_trainer;
    config.log_dir = FreshTestDir("warm_workers");
    config.default_max_trials = 3;
    workers_ = std::make_unique<WarmWorkers>(
        config, [this](const std::string& identity, const comm::Envelope& envelope) {
          sent_.emplace_back(identity, envelope);
          return absl::OkStatus();
        });
  }
  ~WarmWorkersTest() override {
    workers_->StopAll(absl::Now());
    ReapAll(absl::Now() + absl::Seconds(10));
  }

  static comm::Envelope RunTrial(uint64_t run_id) {
    comm::Envelope e;
    e.mutable_run_trial()->set_run_id(run_id);
    return e;
  }
  absl::StatusOr<WarmWorkers::Lent> Lend(uint64_t run_id, const std::string& key, absl::Time now) {
    // The fake never registers: the test does it for it.
    return workers_->Lend(0, key, 0, {{"TUNEFLEET_FAKE_NO_REGISTER", "1"}}, RunTrial(run_id), now);
  }
  void Register(const std::string& identity, pid_t pid) {
    comm::Register r;
    r.set_role(comm::WORKER);
    r.set_slot(0);
    r.set_pid(pid);
    EXPECT_TRUE(workers_->Registered(identity, r));
  }
  // Waits for the pool's processes to end (Tick SIGKILLs the stopped ones at `kill_time`).
  void ReapAll(absl::Time kill_time) {
    for (int i = 0; i < 500 && !workers_->empty(); ++i) {
      workers_->Tick(kill_time);
      int status;
      pid_t pid;
      while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) workers_->ChildEnded(pid, status);
      absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_TRUE(workers_->empty());
  }

  std::unique_ptr<WarmWorkers> workers_;
  std::vector<std::pair<std::string, comm::Envelope>> sent_;
};

TEST_F(WarmWorkersTest, RunTrialWaitsForRegistrationThenTheWorkerIsReused) {
  const absl::Time t0 = absl::Now();
  absl::StatusOr<WarmWorkers::Lent> first = Lend(1, "k", t0);
  ASSERT_TRUE(first.ok()) << first.status();
  const pid_t pid = first->process->pid();
  EXPECT_EQ(first->name, "a/slot-0/w-" + std::to_string(pid) + "#1");
  EXPECT_TRUE(sent_.empty());  // not registered yet
  Register("w1", pid);
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].first, "w1");
  EXPECT_EQ(sent_[0].second.run_trial().run_id(), 1u);
  EXPECT_EQ(workers_->SlotRunning("w1", 1), 0);
  EXPECT_FALSE(workers_->SlotRunning("w1", 2).has_value());
  workers_->GiveBack(0, std::move(first->process), /*retiring=*/false, t0);

  absl::StatusOr<WarmWorkers::Lent> second = Lend(2, "k", t0);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->process->pid(), pid);
  EXPECT_EQ(second->name, "a/slot-0/w-" + std::to_string(pid) + "#2");
  ASSERT_EQ(sent_.size(), 2u);  // registered: sent at once
  EXPECT_EQ(sent_[1].second.run_trial().run_id(), 2u);
  workers_->GiveBack(0, std::move(second->process), false, t0);

  // Another key: the old worker is stopped, a fresh one starts.
  absl::StatusOr<WarmWorkers::Lent> third = Lend(3, "other", t0);
  ASSERT_TRUE(third.ok());
  EXPECT_NE(third->process->pid(), pid);
  EXPECT_EQ(third->name, "a/slot-0/w-" + std::to_string(third->process->pid()) + "#1");
  workers_->GiveBack(0, std::move(third->process), false, t0);
}

TEST_F(WarmWorkersTest, MaxTrialsAndRetiringRecycle) {
  const absl::Time t0 = absl::Now();
  pid_t pid = 0;
  for (uint64_t run = 1; run <= 4; ++run) {
    absl::StatusOr<WarmWorkers::Lent> lent = Lend(run, "k", t0);
    ASSERT_TRUE(lent.ok());
    if (run == 1) pid = lent->process->pid();
    // The default max is 3 here: the 4th trial gets a fresh worker.
    EXPECT_EQ(lent->process->pid() == pid, run <= 3) << run;
    workers_->GiveBack(0, std::move(lent->process), false, t0);
  }
  absl::StatusOr<WarmWorkers::Lent> lent = Lend(5, "k", t0);
  ASSERT_TRUE(lent.ok());
  pid = lent->process->pid();
  workers_->GiveBack(0, std::move(lent->process), /*retiring=*/true, t0);
  lent = Lend(6, "k", t0);
  ASSERT_TRUE(lent.ok());
  EXPECT_NE(lent->process->pid(), pid);
  workers_->GiveBack(0, std::move(lent->process), false, t0);
}

TEST_F(WarmWorkersTest, AWorkerThatNeverRegistersFailsItsTrialOnce) {
  const absl::Time t0 = absl::Now();
  absl::StatusOr<WarmWorkers::Lent> lent = Lend(7, "k", t0);
  ASSERT_TRUE(lent.ok());
  EXPECT_TRUE(workers_->Tick(t0 + absl::Seconds(59)).empty());
  auto overdue = workers_->Tick(t0 + absl::Seconds(61));
  ASSERT_EQ(overdue.size(), 1u);
  EXPECT_EQ(overdue[0].first, 7u);
  EXPECT_NE(overdue[0].second.find("did not register within 1m"), std::string::npos)
      << overdue[0].second;
  EXPECT_TRUE(workers_->Tick(t0 + absl::Seconds(62)).empty());
  // Its run stops it (as the agent does through the rank): the pool drops it when it ends.
  const pid_t pid = lent->process->pid();
  lent->process->Signal(SIGKILL);
  int status;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  lent->process->SetExitStatus(status);
  EXPECT_TRUE(workers_->ChildEnded(pid, status));
  EXPECT_TRUE(workers_->empty());
}

TEST_F(WarmWorkersTest, AnIdleWorkerThatDiesIsDropped) {
  const absl::Time t0 = absl::Now();
  absl::StatusOr<WarmWorkers::Lent> lent = Lend(1, "k", t0);
  ASSERT_TRUE(lent.ok());
  const pid_t pid = lent->process->pid();
  workers_->GiveBack(0, std::move(lent->process), false, t0);
  ::kill(pid, SIGKILL);
  int status;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(workers_->ChildEnded(pid, status));
  EXPECT_TRUE(workers_->empty());
  lent = Lend(2, "k", t0);
  ASSERT_TRUE(lent.ok());
  EXPECT_NE(lent->process->pid(), pid);
  workers_->GiveBack(0, std::move(lent->process), false, t0);
}

TEST_F(WarmWorkersTest, APrewarmedWorkerTakesTheFirstTrialOfItsSlotWhateverItsKey) {
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(workers_->Prewarm(0, {{"TUNEFLEET_FAKE_NO_REGISTER", "1"}}, t0).ok());
  EXPECT_FALSE(workers_->empty());
  Register("w1", /*pid=*/0);   // pid 0: any of the slot's
  EXPECT_TRUE(sent_.empty());  // no trial yet
  // A slot that has a worker keeps it (a fresh one would not have registered).
  ASSERT_TRUE(workers_->Prewarm(0, {{"TUNEFLEET_FAKE_NO_REGISTER", "1"}}, t0).ok());

  absl::StatusOr<WarmWorkers::Lent> first = Lend(1, "any key", t0);
  ASSERT_TRUE(first.ok()) << first.status();
  const pid_t pid = first->process->pid();
  EXPECT_EQ(first->name, "a/slot-0/w-" + std::to_string(pid) + "#1");
  ASSERT_EQ(sent_.size(), 1u);  // the prewarmed worker, registered: the trial goes at once
  EXPECT_EQ(sent_[0].first, "w1");
  EXPECT_EQ(sent_[0].second.run_trial().run_id(), 1u);
  workers_->GiveBack(0, std::move(first->process), /*retiring=*/false, t0);

  // From then on it has its first trial's key, as a worker started for that trial would.
  absl::StatusOr<WarmWorkers::Lent> second = Lend(2, "any key", t0);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->process->pid(), pid);
  EXPECT_EQ(sent_.size(), 2u);
  workers_->GiveBack(0, std::move(second->process), false, t0);
  absl::StatusOr<WarmWorkers::Lent> third = Lend(3, "another key", t0);
  ASSERT_TRUE(third.ok());
  EXPECT_NE(third->process->pid(), pid);
  EXPECT_EQ(sent_.size(), 2u);  // a fresh worker: not registered yet
  workers_->GiveBack(0, std::move(third->process), false, t0);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::cerr << "usage: warm_workers_test FAKE_TRAINER" << std::endl;
    return 2;
  }
  tunefleet::launcher::g_trainer = argv[1];
  return RUN_ALL_TESTS();
}
