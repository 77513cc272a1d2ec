#include "trainer/commands/worker_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <c10/core/GeneratorImpl.h>
#include <torch/torch.h>
#ifdef TUNEFLEET_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/safe_path.h"
#include "trainer/commands/train_command.h"
#include "trainer/data/utf8_check.h"
#include "trainer/distributed/trial_group.h"
#include "trainer/distributed/worker_channel.h"
#include "trainer/model/checkpoint_cache.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer worker";
constexpr size_t kTailBytes = 4096;  // TrialDone.stderr_tail, as ChildProcess keeps for Exit
constexpr int kDefaultMaxTrials = 16;

// Between trials SIGTERM / SIGINT ask the loop to leave (exit 0); during one they end the
// process as they end a fresh `trainer train` (the agent cancels a warm trial by signalling the
// worker's process group). A handler, not a SignalFd: LibTorch's threads (started by a trial)
// would not have the signals blocked, and one of them may be the thread that gets it.
volatile std::sig_atomic_t g_in_trial = 0;
volatile std::sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int sig) {
  if (g_in_trial) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);  // delivered when the handler returns: the default action ends the process
    return;
  }
  g_stop_signal = sig;
}

void InstallSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
}

void FlushOutput() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

// Ends the worker between trials without running the destructors of what it keeps for the
// next trial (host copies of weights, tokenized data, allocator pools): they took 0.3-0.4 s,
// which the agent, and a sweep stopping its dev-mode agent, waited for. The channel closes
// first (delivering a last TrialDone), the kept process group is aborted, output flushed.
[[noreturn]] void Leave(std::unique_ptr<WorkerChannel> channel, int code) {
  channel.reset();
  KeepTrialGroups(false);
  FlushOutput();
  std::_Exit(code);
}

// The trial's variables set for its lifetime; the previous values (or their absence) come back.
class TrialEnvironment {
 public:
  explicit TrialEnvironment(const std::map<std::string, std::string>& env) {
    for (const auto& [name, value] : env) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old == nullptr ? std::nullopt : std::optional<std::string>(old));
      ::setenv(name.c_str(), value.c_str(), /*overwrite=*/1);
    }
  }
  ~TrialEnvironment() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second.has_value()) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }
  TrialEnvironment(const TrialEnvironment&) = delete;
  TrialEnvironment& operator=(const TrialEnvironment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// stdout and stderr pointed at the trial's log (appended, as the agent's log of a fresh rank),
// and back at the worker's own when it goes away.
class RedirectedOutput {
 public:
  RedirectedOutput() = default;
  RedirectedOutput(const RedirectedOutput&) = delete;
  RedirectedOutput& operator=(const RedirectedOutput&) = delete;

  absl::Status Open(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      if (absl::Status s = MakeDirs(path.substr(0, slash)); !s.ok()) return s;
    }
    // Never through a link planted in the log folder (common/safe_path.h).
    absl::StatusOr<int> opened = OpenSafeFile(path, O_WRONLY | O_APPEND | O_CREAT);
    if (!opened.ok()) return opened.status();
    const int fd = *opened;
    FlushOutput();
    saved_out_ = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    saved_err_ = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
    return absl::OkStatus();
  }

  ~RedirectedOutput() {
    if (saved_out_ < 0 && saved_err_ < 0) return;
    FlushOutput();
    if (saved_out_ >= 0) ::dup2(saved_out_, STDOUT_FILENO), ::close(saved_out_);
    if (saved_err_ >= 0) ::dup2(saved_err_, STDERR_FILENO), ::close(saved_err_);
  }

 private:
  int saved_out_ = -1;
  int saved_err_ = -1;
};

// The last kTailBytes of the log, as valid UTF-8 (a proto3 string must be).
std::string LogTail(const std::string& path) {
  return path.empty() ? "" : ReplaceInvalidUtf8(FileTail(path, kTailBytes));
}

// What a fresh process has and an earlier trial may have changed: the default generators'
// state (a trial seeds them from train.seed, but anything drawn before that would otherwise
// continue the previous trial's sequence) and the intra-op thread count, which a fresh process
// takes from OMP_NUM_THREADS (CPU reductions split by thread, so it can change the last bits).
void ResetTorchState(int worker_threads) {
  torch::manual_seed(c10::default_rng_seed_val);
  int threads = worker_threads;
  if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp != nullptr) {
    int n = 0;
    if (absl::SimpleAtoi(omp, &n) && n > 0) threads = n;
  }
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
}

// The GPU memory the trial's tensors left cached goes back to the device, so that the next trial
// (another batch size, say) finds it as a fresh process does, not fragmented by this one.
void ReleaseCachedMemory() {
#ifdef TUNEFLEET_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

struct WorkerState {
  int threads = 1;  // the worker's own intra-op thread count
  int rank = -1;    // the worker's own log rank
};

// Runs one trial as `trainer train` would; returns its exit code.
int RunOneTrial(const TrialOrder& order, const WorkerState& worker) {
  TrialEnvironment env(order.env);
  RedirectedOutput output;
  if (!order.log_path.empty()) {
    if (absl::Status s = output.Open(order.log_path); !s.ok()) {
      TF_LOG(ERROR) << "trial " << order.trial << ": " << s.message();
      return kExitFailure;
    }
  }
  SetLogTrial(-1);  // RunTrain sets the trial once it has its agent client, as a fresh rank
  SetLogRank(EnvInt("RANK", -1));
  int code = kExitFailure;
  try {
    ResetTorchState(worker.threads);
    if (order.argv.empty() || order.argv[0] != "train") {
      PrintError(kProgram, absl::InvalidArgumentError(absl::StrCat(
                               "a warm worker runs only `train`, got '",
                               order.argv.empty() ? "" : order.argv[0].substr(0, 200), "'")));
      code = kExitUsage;
    } else {
      code = RunTrain(std::vector<std::string>(order.argv.begin() + 1, order.argv.end()));
    }
    ReleaseCachedMemory();
  } catch (const std::exception& e) {
    // What ends a fresh trainer through trainer_torch_main.cc's terminate handler.
    std::string what = e.what();
    PrintError(kProgram, absl::InternalError(what.substr(0, what.find('\n'))));
    code = kExitFailure;
  }
  FlushOutput();
  SetLogTrial(-1);
  SetLogRank(worker.rank);
  return code;
}

// The agent's settings for this worker, from its environment.
struct WorkerSettings {
  std::string endpoint;                // TUNEFLEET_AGENT_ENDPOINT
  int slot = -1;                       // TUNEFLEET_WORKER_SLOT
  int max_trials = kDefaultMaxTrials;  // TUNEFLEET_WORKER_MAX_TRIALS
};

absl::StatusOr<WorkerSettings> ReadWorkerSettings() {
  WorkerSettings settings;
  const char* endpoint = std::getenv("TUNEFLEET_AGENT_ENDPOINT");
  if (endpoint == nullptr || *endpoint == '\0') {
    return absl::InvalidArgumentError(
        "TUNEFLEET_AGENT_ENDPOINT is not set (the agent starts workers)");
  }
  settings.endpoint = endpoint;
  settings.slot = EnvInt("TUNEFLEET_WORKER_SLOT", -1);
  if (settings.slot < 0) {
    return absl::InvalidArgumentError(
        "TUNEFLEET_WORKER_SLOT must be set to the slot's number (>= 0)");
  }
  settings.max_trials = EnvInt("TUNEFLEET_WORKER_MAX_TRIALS", kDefaultMaxTrials);
  if (settings.max_trials < 1) {
    return absl::InvalidArgumentError("TUNEFLEET_WORKER_MAX_TRIALS must be an integer >= 1");
  }
  return settings;
}

// What this process keeps and how it behaves as a warm worker, set once before its first trial.
void SetUpWorkerProcess() {
  InstallSignalHandlers();
  // A sweep's trials start from the same model folder: keep its weights in host memory.
  EnableCheckpointCache(true);
  // A multi-rank trial's process group is kept for the next trial of the same ranks
  // (trainer/distributed/trial_group.h), and aborted when the worker leaves (Leave).
  KeepTrialGroups(true);
  // PyTorch's NCCL heartbeat monitor polls its group's store, which rank 0's worker serves:
  // once that worker retires, each peer still keeping the group would warn every second. A
  // trial's collectives keep their timeout (train.ddp_timeout_s) without it.
  ::setenv("TORCH_NCCL_ENABLE_MONITORING", "0", /*overwrite=*/0);
}

}  // namespace

int RunWorker(const std::vector<std::string>& args) {
  CommandLine cli(
      kProgram, "",
      absl::StrCat(kWorkerSummary,
                   ".\nThe agent starts it for a slot; it reads TUNEFLEET_AGENT_ENDPOINT,\n"
                   "TUNEFLEET_WORKER_SLOT and TUNEFLEET_WORKER_MAX_TRIALS (default 16),\n"
                   "and runs each trial as `trainer train` would, with the trial's\n"
                   "environment and its stdout and stderr in the trial's log."));
  if (int rc = ParseOrExit(cli, args, kProgram); rc >= 0) return rc;
  absl::StatusOr<WorkerSettings> settings = ReadWorkerSettings();
  if (!settings.ok()) {
    PrintError(kProgram, settings.status());
    return kExitUsage;
  }
  const std::string& endpoint = settings->endpoint;
  const int slot = settings->slot, max_trials = settings->max_trials;
  SetUpWorkerProcess();
  const pid_t parent = ::getppid();
  auto channel = WorkerChannel::Connect(endpoint, slot);
  if (!channel.ok()) {
    PrintError(kProgram, channel.status());
    return kExitFailure;
  }
  WorkerState worker;
  worker.threads = at::get_num_threads();
  worker.rank = EnvInt("RANK", -1);
  TF_LOG(INFO) << "warm worker for slot " << slot << " registered at " << endpoint << " (pid "
               << ::getpid() << ", at most " << max_trials << " trials)";
  for (int trials = 0;;) {
    if (g_stop_signal != 0) {
      TF_LOG(INFO) << "signal " << g_stop_signal << " between trials; leaving";
      Leave(std::move(*channel), kExitOk);
    }
    // PR_SET_PDEATHSIG (common/child_process.cc) ends a worker whose agent dies; this covers
    // a parent that set none.
    if (::getppid() != parent) {
      TF_LOG(INFO) << "the agent (pid " << parent << ") is gone; leaving";
      Leave(std::move(*channel), kExitOk);
    }
    TrialOrder order;
    const WorkerChannel::Event event = (*channel)->Next(absl::Milliseconds(200), &order);
    if (event == WorkerChannel::Event::kShutdown) Leave(std::move(*channel), kExitOk);
    if (event != WorkerChannel::Event::kRunTrial) continue;
    ++trials;
    g_in_trial = 1;
    const int code = RunOneTrial(order, worker);
    g_in_trial = 0;
    TrialResult result;
    result.run_id = order.run_id;
    result.exit_code = code;
    result.retiring = code != kExitOk || trials >= max_trials;
    result.stderr_tail = LogTail(order.log_path);
    TF_LOG(INFO) << "trial " << order.trial << " (run " << order.run_id << ", " << trials
                 << " of at most " << max_trials << ") exited " << code
                 << (result.retiring ? "; retiring" : "");
    if (absl::Status s = (*channel)->SendDone(result); !s.ok()) {
      PrintError(kProgram, absl::UnavailableError(absl::StrCat(
                               "cannot tell the agent the trial ended: ", s.message())));
      Leave(std::move(*channel), kExitFailure);
    }
    if (result.retiring) Leave(std::move(*channel), kExitOk);
  }
}

}  // namespace trainer
}  // namespace tunefleet
