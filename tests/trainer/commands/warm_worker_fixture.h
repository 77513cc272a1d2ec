// The fixture of warm_worker_test.cc: the `trainer` binary under test, a fake agent (a ROUTER
// on an ipc socket that registers the worker, hands it RunTrials, collects TrialDones and
// answers every Report with CONTINUE at once), and the test class with the folders, the tiny
// STS-B config and the environment a rank of trial N gets.
// Not thread-safe: one test thread drives the agent.
#ifndef TUNEFLEET_TESTS_TRAINER_WARM_WORKER_FIXTURE_H_
#define TUNEFLEET_TESTS_TRAINER_WARM_WORKER_FIXTURE_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "gtest/gtest.h"
#include "tests/trainer/testing/trainer_test_util.h"

namespace tunefleet {
namespace trainer {

using Clock = std::chrono::steady_clock;

// The `trainer` binary under test: the test's one argument ($(location //trainer) in Bazel, the
// built binary in CMake).
void SetTrainerPath(const std::string& path);

// Starts `trainer ARGS...` with `env` on top of this process's environment, its stdout and stderr
// appended to `log`; it dies with this test (PDEATHSIG).
pid_t Spawn(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            const std::string& log);

// An agent's trainer channel, as the worker and the trials see it.
class FakeAgent {
 public:
  explicit FakeAgent(const std::string& endpoint)
      : endpoint_(endpoint), context_(1), router_(context_, zmq::socket_type::router) {
    comm::ConfigureSocket(router_, /*router=*/true);
    router_.bind(endpoint);
  }

  const std::string& endpoint() const { return endpoint_; }
  bool worker_registered() const { return !worker_.empty(); }
  const comm::Register& worker_register() const { return worker_register_; }
  const std::vector<comm::TrialDone>& done() const { return done_; }
  int reports() const { return reports_; }

  // Handles messages until `until()` holds (true) or `timeout` passes (false).
  bool PumpUntil(const std::function<bool()>& until, std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!until()) {
      if (Clock::now() > deadline) return false;
      zmq::pollitem_t item{static_cast<void*>(router_), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(50));
      while (auto received = comm::TryReceive(router_, /*router=*/true)) Handle(*received);
    }
    return true;
  }

  // Waits for the next worker's Register (after the last one left).
  void ForgetWorker() { worker_.clear(); }

  void SendTrial(const comm::RunTrial& trial) {
    comm::Envelope e;
    *e.mutable_run_trial() = trial;
    ASSERT_TRUE(comm::SendTo(router_, worker_, e).ok());
  }

 private:
  void Handle(const comm::Received& received) {
    ASSERT_TRUE(received.envelope.ok()) << received.envelope.status();
    const comm::Envelope& e = *received.envelope;
    if (e.has_register_() && e.register_().role() == comm::WORKER) {
      worker_ = received.identity;
      worker_register_ = e.register_();
    } else if (e.has_report()) {
      ++reports_;
      comm::Envelope answer;
      comm::Decision* d = answer.mutable_decision();
      d->set_run_id(e.report().run_id());
      d->set_trial(e.report().trial());
      d->set_step(e.report().step());
      d->set_action(comm::Decision::CONTINUE);
      EXPECT_TRUE(comm::SendTo(router_, received.identity, answer).ok());
    } else if (e.has_trial_done()) {
      done_.push_back(e.trial_done());
    }
  }

  std::string endpoint_;
  zmq::context_t context_;
  zmq::socket_t router_;
  std::string worker_;
  comm::Register worker_register_;
  std::vector<comm::TrialDone> done_;
  int reports_ = 0;
};

// Waits for `pid` to exit while the agent answers; its exit code, 128 + the signal that ended
// it, or -1 (still running after `timeout`: killed).
int WaitExit(FakeAgent& agent, pid_t pid, std::chrono::seconds timeout);

// A test's folders, the fake agent, and the environment a rank of trial N gets.
class WarmWorkerTest : public ::testing::Test {
 protected:
  WarmWorkerTest() : sockets_("ww"), agent_("ipc://" + sockets_.path() + "/trainers.sock") {}

  void SetUp() override {
    dir_ = FreshTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    const std::string train = FirstLines("data/stsbenchmark/sts-train.csv", 160, "ww-train.csv");
    const std::string eval = FirstLines("data/stsbenchmark/sts-dev.csv", 64, "ww-dev.csv");
    config_ = dir_ + "/tiny.yaml";
    WriteAll(
        config_,
        absl::StrCat(
            "model: {path: data/bert-tiny-random, pooling: mean, max_seq_len: 64, dropout: 0.1}\n"
            "task: {type: sts, train: ",
            train, ", eval: ", eval,
            ", format: stsb}\n"
            "train:\n"
            "  epochs: 1\n  max_steps: 12\n  batch_size: 16\n  lr: 1.0e-4\n  weight_decay: 0.01\n"
            "  warmup_ratio: 0.2\n  schedule: linear\n  max_grad_norm: 1.0\n  grad_accum: 1\n"
            "  precision: fp32\n  seed: 42\n  shuffle: true\n  eval_every_steps: 4\n"
            "  log_every_steps: 1\n"
            "output: {dir: ",
            dir_, "/unused, save: none, checkpoint: false}\n"));
  }

  // The worker's own environment, as the agent starts it for slot 0.
  std::map<std::string, std::string> WorkerEnv() const {
    std::map<std::string, std::string> env = {{"TUNEFLEET_AGENT_ENDPOINT", agent_.endpoint()},
                                              {"TUNEFLEET_WORKER_SLOT", "0"},
                                              {"OMP_NUM_THREADS", "1"}};
    if (!gpu_) env["CUDA_VISIBLE_DEVICES"] = "";  // the CPU: bit for bit
    return env;
  }

  std::map<std::string, std::string> TrialEnv(int64_t trial) const {
    return {{"RANK", "0"},
            {"WORLD_SIZE", "1"},
            {"LOCAL_RANK", "0"},
            {"LOCAL_WORLD_SIZE", "1"},
            {"TUNEFLEET_AGENT_ENDPOINT", agent_.endpoint()},
            {"TUNEFLEET_RUN_ID", std::to_string(1000 + trial)},
            {"TUNEFLEET_TRIAL", std::to_string(trial)},
            {"TUNEFLEET_SWEEP", "warm"},
            {"TUNEFLEET_DECISION_TIMEOUT_MS", "30000"}};
  }

  comm::RunTrial Trial(int64_t trial, const std::vector<std::string>& argv) const {
    comm::RunTrial t;
    t.set_run_id(1000 + trial);
    t.set_trial(trial);
    for (const std::string& a : argv) t.add_argv(a);
    for (const auto& [k, v] : TrialEnv(trial)) (*t.mutable_env())[k] = v;
    t.set_log_path(absl::StrCat(dir_, "/logs/trial-", trial, "/rank-0.log"));
    return t;
  }

  pid_t StartWorker(const std::map<std::string, std::string>& extra = {}) {
    std::map<std::string, std::string> env = WorkerEnv();
    env.insert(extra.begin(), extra.end());
    const pid_t pid = Spawn({"worker"}, env, dir_ + "/worker.log");
    EXPECT_TRUE(
        agent_.PumpUntil([&] { return agent_.worker_registered(); }, std::chrono::seconds(30)))
        << "no Register from the worker: " << ReadAll(dir_ + "/worker.log");
    return pid;
  }

  // Sends trial `t` and waits for its TrialDone.
  comm::TrialDone RunWarm(const comm::RunTrial& t) {
    const size_t before = agent_.done().size();
    agent_.SendTrial(t);
    EXPECT_TRUE(
        agent_.PumpUntil([&] { return agent_.done().size() > before; }, std::chrono::seconds(120)))
        << "no TrialDone for trial " << t.trial() << ": " << ReadAll(t.log_path());
    return agent_.done().size() > before ? agent_.done().back() : comm::TrialDone();
  }

  // Whether the trainer sees a GPU here, asked the way a trial would find out (`train
  // --dry_run` in the worker's environment); a failing probe fails the test.
  bool TrainerSeesGpu() {
    const std::string probe = dir_ + "/probe.log";
    const pid_t pid = Spawn({"train", "--config", config_, "--dry_run"}, WorkerEnv(), probe);
    EXPECT_EQ(WaitExit(agent_, pid, std::chrono::seconds(120)), 0) << ReadAll(probe);
    return absl::StrContains(ReadAll(probe), "device   cuda");
  }

  ShortTempDir sockets_;
  // Runs three different trials warm in one worker, then cold (`trainer train`), and compares
  // each pair's metrics.jsonl: equal on the CPU (and the saved models byte for byte), within
  // `tolerance` (relative, per number) on a GPU, whose kernels are not bit-reproducible run to run.
  void CheckWarmAgainstCold(double tolerance);

  bool gpu_ = false;  // let the worker and the cold trials see this host's GPUs
  FakeAgent agent_;
  std::string dir_;
  std::string config_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_TRAINER_WARM_WORKER_FIXTURE_H_
