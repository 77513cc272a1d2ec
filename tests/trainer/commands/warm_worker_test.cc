// `trainer worker` (trainer/commands/worker_command.h), the real binary, against a fake agent: a
// ROUTER on an ipc socket that takes the worker's Register{WORKER}, hands it trials (RunTrial),
// collects its TrialDones, and answers every Report (from the trials' own TRAINER connections) with
// a CONTINUE Decision at once, so no trial waits out the decision timeout.
//
// The key acceptance: three different trials run warm, one after the other in one worker, give
// the same metrics.jsonl as the same three run cold (`trainer train`, one process each, under
// the same fake agent and environment), bit for bit, apart from train/samples_per_s — the only
// key that measures time (samples over the wall-clock seconds of the logging interval); every
// other key (step, samples, epoch, lr, train/loss, train/grad_norm, eval/*) is a function of
// the config alone; and the saved weights (model.safetensors) are the same bytes. The trials use
// dropout and shuffling, so any generator state carried from one warm trial to the next would
// show.
// Also: a failed trial (bad config, or not `train`) is answered with its exit code and
// retiring, and the worker leaves; on a GPU, a trial that runs out of memory (another process
// holds the rest of the GPU, as another user's job would) ends with exit code 3 and retires
// its worker, and the same trial then runs in a fresh worker once the memory is back; a worker
// retires after TUNEFLEET_WORKER_MAX_TRIALS; SIGTERM between trials ends it with exit code 0.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "comm/proto/messages.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/trainer/commands/warm_worker_fixture.h"
#include "tests/trainer/testing/trainer_test_util.h"

namespace tunefleet {
namespace trainer {
namespace {

// The time-dependent keys of metrics.jsonl, left out of the comparison.
const char* const kTimeKeys[] = {"train/samples_per_s"};

// Two metrics lines with the same keys, numbers within `tolerance` (relative, with an absolute
// floor of the same size), everything else equal.
bool Close(const nlohmann::json& a, const nlohmann::json& b, double tolerance) {
  if (a.size() != b.size()) return false;
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (!a.contains(it.key())) return false;
    const nlohmann::json& x = a[it.key()];
    const nlohmann::json& y = it.value();
    if (x.is_number() && y.is_number()) {
      const double u = x.get<double>(), v = y.get<double>();
      if (std::abs(u - v) > tolerance * std::max(1.0, std::abs(v))) return false;
    } else if (x != y) {
      return false;
    }
  }
  return true;
}

// metrics.jsonl without its time-dependent keys.
std::vector<nlohmann::json> Metrics(const std::string& path) {
  std::vector<nlohmann::json> lines = ReadJsonLines(path);
  for (nlohmann::json& line : lines) {
    for (const char* key : kTimeKeys) line.erase(key);
  }
  return lines;
}

}  // namespace

void WarmWorkerTest::CheckWarmAgainstCold(double tolerance) {
  const std::vector<std::vector<std::string>> overrides = {
      {"train.lr=1e-4", "train.batch_size=16", "train.seed=1"},
      {"train.lr=3e-5", "train.batch_size=8", "train.seed=2", "train.max_steps=10"},
      {"train.lr=2e-4", "train.batch_size=16", "train.seed=3", "train.grad_accum=2"}};
  auto argv = [&](size_t i, const std::string& kind) {
    std::vector<std::string> a = {"train", "--config", config_};
    a.insert(a.end(), overrides[i].begin(), overrides[i].end());
    a.push_back(absl::StrCat("output.dir=", dir_, "/", kind, "/trial-", i));
    a.push_back("output.save=last");
    return a;
  };

  const pid_t worker = StartWorker();
  EXPECT_EQ(agent_.worker_register().slot(), 0);
  EXPECT_EQ(agent_.worker_register().pid(), worker);
  for (size_t i = 0; i < overrides.size(); ++i) {
    const comm::RunTrial t = Trial(static_cast<int64_t>(i), argv(i, "warm"));
    const comm::TrialDone done = RunWarm(t);
    EXPECT_EQ(done.run_id(), t.run_id());
    EXPECT_EQ(done.exit_code(), 0) << done.stderr_tail();
    EXPECT_FALSE(done.retiring());
    const std::string log = ReadAll(t.log_path());
    EXPECT_TRUE(absl::StrContains(log, "done     ")) << log;  // the trial's stdout went there
    EXPECT_TRUE(absl::StrContains(log, gpu_ ? "device   cuda" : "device   cpu")) << log;
    EXPECT_TRUE(absl::StrContains(done.stderr_tail(), "memory   peak")) << done.stderr_tail();
  }
  const int warm_reports = agent_.reports();
  EXPECT_GT(warm_reports, 0);

  for (size_t i = 0; i < overrides.size(); ++i) {
    std::map<std::string, std::string> env = WorkerEnv();
    for (const auto& [k, v] : TrialEnv(static_cast<int64_t>(i))) env[k] = v;
    std::vector<std::string> args = argv(i, "cold");
    const std::string log = absl::StrCat(dir_, "/cold-", i, ".log");
    const pid_t cold = Spawn(args, env, log);
    ASSERT_EQ(WaitExit(agent_, cold, std::chrono::seconds(120)), 0) << ReadAll(log);
  }
  EXPECT_EQ(agent_.reports(), 2 * warm_reports);  // the same reports, warm and cold

  for (size_t i = 0; i < overrides.size(); ++i) {
    const auto warm = Metrics(absl::StrCat(dir_, "/warm/trial-", i, "/metrics.jsonl"));
    const auto cold = Metrics(absl::StrCat(dir_, "/cold/trial-", i, "/metrics.jsonl"));
    ASSERT_FALSE(cold.empty()) << "trial " << i;
    ASSERT_EQ(warm.size(), cold.size()) << "trial " << i;
    int evals = 0;
    for (size_t l = 0; l < cold.size(); ++l) {
      if (tolerance == 0) {
        EXPECT_EQ(warm[l], cold[l]) << "trial " << i << ", line " << l + 1;
      } else {
        EXPECT_TRUE(Close(warm[l], cold[l], tolerance))
            << "trial " << i << ", line " << l + 1 << ": " << warm[l] << " vs " << cold[l];
      }
      evals += cold[l].contains("eval/spearman");
    }
    EXPECT_GT(evals, 0) << "trial " << i;
    if (tolerance != 0) continue;
    // And the trained weights themselves (metrics.jsonl rounds to 9 digits).
    const std::string warm_model =
        ReadAll(absl::StrCat(dir_, "/warm/trial-", i, "/model/model.safetensors"));
    EXPECT_FALSE(warm_model.empty()) << "trial " << i;
    EXPECT_TRUE(warm_model ==
                ReadAll(absl::StrCat(dir_, "/cold/trial-", i, "/model/model.safetensors")))
        << "trial " << i << ": the warm and cold models differ";
  }
  // The trials' output went to their logs, the worker's own lines to its own log.
  const std::string own = ReadAll(dir_ + "/worker.log");
  EXPECT_TRUE(absl::StrContains(own, "warm worker for slot 0")) << own;
  EXPECT_FALSE(absl::StrContains(own, "done     ")) << own;

  ::kill(worker, SIGTERM);  // between trials: leaves with 0
  EXPECT_EQ(WaitExit(agent_, worker, std::chrono::seconds(20)), 0) << own;
}

namespace {

TEST_F(WarmWorkerTest, WarmTrialsMatchColdOnes) { CheckWarmAgainstCold(/*tolerance=*/0); }

// The GPU case (ctest on the GPU host): the same trials in fp32 on the GPU agree within 1e-3,
// far below what separates the trials (their lrs, seeds and batch sizes differ).
TEST_F(WarmWorkerTest, OnAGpuWarmTrialsMatchColdOnesWithinNoise) {
  gpu_ = true;
  if (!TrainerSeesGpu()) GTEST_SKIP() << "no GPU for the trainer";
  CheckWarmAgainstCold(/*tolerance=*/1e-3);
}

// `warm_worker_test --gpu_hog`: takes GPU 0's free memory, in blocks from 1 GiB down to 2 MiB
// (LibTorch's allocator throws when a block no longer fits), prints "held N MiB" and sleeps until
// it is killed. Exit code 2 when LibTorch sees no GPU.
int GpuHog() {
  if (!torch::cuda::is_available()) {
    std::cout << "no GPU" << std::endl;
    return 2;
  }
  std::vector<torch::Tensor> held;
  int64_t bytes = 0;
  for (int64_t block = int64_t{1} << 30; block >= (int64_t{2} << 20); block /= 2) {
    for (;;) {
      try {
        held.push_back(torch::empty({block}, torch::dtype(torch::kUInt8).device(torch::kCUDA)));
        bytes += block;
      } catch (const c10::Error&) {
        break;
      }
    }
  }
  std::cout << "held " << (bytes >> 20) << " MiB" << std::endl;
  for (;;) ::pause();
}

// The GPU case of acceptance 2 (ctest on the GPU host): a trial that runs out of memory fails
// alone. The worker runs a trial; another process then takes the rest of the GPU and the next
// trial, 10 times the batch, runs out of memory: exit code 3, the error line, and the worker
// retires and leaves. With the memory back, the same trial runs in a fresh worker and succeeds.
TEST_F(WarmWorkerTest, OnAGpuAnOutOfMemoryTrialRetiresItsWorker) {
  gpu_ = true;
  if (!TrainerSeesGpu()) GTEST_SKIP() << "no GPU for the trainer";

  auto trial = [&](int64_t n, const std::string& batch) {
    return Trial(n, {"train", "--config", config_, "train.batch_size=" + batch, "train.max_steps=4",
                     absl::StrCat("output.dir=", dir_, "/trial-", n)});
  };
  const pid_t worker = StartWorker();
  const comm::TrialDone first = RunWarm(trial(1, "16"));
  ASSERT_EQ(first.exit_code(), 0) << first.stderr_tail();
  ASSERT_FALSE(first.retiring());

  // The hog: this binary again, with --gpu_hog.
  const std::string hog_log = dir_ + "/hog.log";
  const pid_t hog = ::fork();
  if (hog == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int fd = ::open(hog_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
    ::execl("/proc/self/exe", "warm_worker_test", "--gpu_hog", static_cast<char*>(nullptr));
    _exit(127);
  }
  struct KillAtEnd {
    pid_t pid;
    ~KillAtEnd() {
      if (::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
    }
  } hog_guard{hog};
  auto hog_ready = [&] {
    return absl::StrContains(ReadAll(hog_log), "held ") ||
           ::waitpid(hog, nullptr, WNOHANG) == hog;  // it left: no GPU for LibTorch here
  };
  ASSERT_TRUE(agent_.PumpUntil(hog_ready, std::chrono::seconds(120)))
      << "the hog did not fill the GPU: " << ReadAll(hog_log);
  ASSERT_TRUE(absl::StrContains(ReadAll(hog_log), "held ")) << ReadAll(hog_log);
  std::cout << "hog: " << ReadAll(hog_log);

  const comm::RunTrial big = trial(2, "160");
  const comm::TrialDone oom = RunWarm(big);
  EXPECT_EQ(oom.exit_code(), 3) << oom.stderr_tail();
  EXPECT_TRUE(oom.retiring());
  EXPECT_TRUE(absl::StrContains(oom.stderr_tail(), "out of memory at train.batch_size 160"))
      << oom.stderr_tail();
  EXPECT_EQ(WaitExit(agent_, worker, std::chrono::seconds(30)), 0) << ReadAll(dir_ + "/worker.log");

  ::kill(hog, SIGKILL);  // the memory is back
  ::waitpid(hog, nullptr, 0);
  agent_.ForgetWorker();
  const pid_t fresh = StartWorker();
  EXPECT_EQ(agent_.worker_register().pid(), fresh);
  const comm::RunTrial again = trial(3, "160");  // the same config, its own output folder
  const comm::TrialDone done = RunWarm(again);
  EXPECT_EQ(done.exit_code(), 0) << done.stderr_tail();
  EXPECT_TRUE(absl::StrContains(ReadAll(again.log_path()), "device   cuda"));
  ::kill(fresh, SIGTERM);
  EXPECT_EQ(WaitExit(agent_, fresh, std::chrono::seconds(20)), 0);
}

TEST_F(WarmWorkerTest, BadConfigRetiresTheWorker) {
  const pid_t worker = StartWorker();
  const comm::RunTrial t = Trial(5, {"train", "--config", config_, "train.batch_size=0",
                                     absl::StrCat("output.dir=", dir_, "/bad")});
  const comm::TrialDone done = RunWarm(t);
  EXPECT_EQ(done.run_id(), t.run_id());
  EXPECT_EQ(done.exit_code(), 2);
  EXPECT_TRUE(done.retiring());
  EXPECT_TRUE(absl::StrContains(done.stderr_tail(), "trainer train: error")) << done.stderr_tail();
  EXPECT_EQ(WaitExit(agent_, worker, std::chrono::seconds(20)), 0) << ReadAll(dir_ + "/worker.log");
}

TEST_F(WarmWorkerTest, OnlyTrainRuns) {
  const pid_t worker = StartWorker();
  const comm::RunTrial t = Trial(6, {"eval", "--model", "x"});
  const comm::TrialDone done = RunWarm(t);
  EXPECT_EQ(done.exit_code(), 2);
  EXPECT_TRUE(done.retiring());
  EXPECT_TRUE(absl::StrContains(ReadAll(t.log_path()), "runs only `train`, got 'eval'"))
      << ReadAll(t.log_path());
  EXPECT_EQ(WaitExit(agent_, worker, std::chrono::seconds(20)), 0);
}

TEST_F(WarmWorkerTest, RetiresAfterMaxTrials) {
  const pid_t worker = StartWorker({{"TUNEFLEET_WORKER_MAX_TRIALS", "2"}});
  const comm::RunTrial help = Trial(1, {"train", "--help"});
  const comm::TrialDone first = RunWarm(help);
  EXPECT_EQ(first.exit_code(), 0);
  EXPECT_FALSE(first.retiring());
  // The help (every key of the trainer YAML) is longer than the tail: its first line is in the log.
  EXPECT_FALSE(first.stderr_tail().empty());
  EXPECT_TRUE(absl::StrContains(ReadAll(help.log_path()), "Usage: trainer train"))
      << ReadAll(help.log_path());
  const comm::TrialDone second = RunWarm(Trial(2, {"train", "--help"}));
  EXPECT_EQ(second.exit_code(), 0);
  EXPECT_TRUE(second.retiring());
  EXPECT_EQ(WaitExit(agent_, worker, std::chrono::seconds(20)), 0);
}

// The agent cancels a warm trial as a fresh one: SIGTERM to the worker, which dies of it.
TEST_F(WarmWorkerTest, SigtermDuringATrialEndsTheWorker) {
  const pid_t worker = StartWorker();
  agent_.SendTrial(Trial(7, {"train", "--config", config_, "train.max_steps=100000",
                             absl::StrCat("output.dir=", dir_, "/long")}));
  ASSERT_TRUE(agent_.PumpUntil([&] { return agent_.reports() > 0; }, std::chrono::seconds(60)))
      << ReadAll(dir_ + "/logs/trial-7/rank-0.log");
  ::kill(worker, SIGTERM);
  EXPECT_EQ(WaitExit(agent_, worker, std::chrono::seconds(20)), 128 + SIGTERM);
  EXPECT_TRUE(agent_.done().empty());
}

TEST_F(WarmWorkerTest, NeedsItsEnvironment) {
  const std::string log = dir_ + "/noslot.log";
  const pid_t pid = Spawn({"worker"}, {{"TUNEFLEET_AGENT_ENDPOINT", agent_.endpoint()}}, log);
  EXPECT_EQ(WaitExit(agent_, pid, std::chrono::seconds(30)), 2);
  EXPECT_TRUE(absl::StrContains(ReadAll(log), "TUNEFLEET_WORKER_SLOT")) << ReadAll(log);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--gpu_hog") return tunefleet::trainer::GpuHog();
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::cerr << "usage: warm_worker_test TRAINER" << std::endl;
    return 2;
  }
  tunefleet::trainer::SetTrainerPath(argv[1]);
  return RUN_ALL_TESTS();
}
