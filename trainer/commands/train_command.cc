#include "trainer/commands/train_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include <torch/cuda.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "comm/process_group.h"
#include "common/cli.h"
#include "common/gpu_detect.h"
#include "common/logging.h"
#include "common/nvml.h"
#include "trainer/commands/train_dry_run.h"
#include "trainer/config/train_config.h"
#include "trainer/data/no_duplicates.h"
#include "trainer/device.h"
#include "trainer/distributed/agent_client.h"
#include "trainer/distributed/local_ranks.h"
#include "trainer/distributed/trial_group.h"
#include "trainer/tasks/loss_registry.h"
#include "trainer/train/memory_estimate.h"
#include "trainer/train/resolved_config.h"
#include "trainer/train/train_loop.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer train";

double Mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

int ExitCodeFor(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kResourceExhausted:
      return kExitOutOfMemory;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnimplemented:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

void PrintConfig(const TrainerConfig& c, const DeviceInfo& device) {
  std::cout << "config   " << c.source << "\n"
            << "model    " << c.model.path << " ("
            << (c.model.kind == "cross_encoder" ? std::string("cross-encoder")
                                                : absl::StrCat("pooling ", c.model.pooling))
            << ", max_seq_len " << c.model.max_seq_len << ", dropout " << c.model.dropout << ")\n"
            << "task     " << c.task.type << " on " << c.task.train << " (" << c.task.format << ")"
            << (c.task.eval.empty() ? "" : ", eval " + c.task.eval)
            << (c.task.eval_queries.empty()
                    ? ""
                    : ", eval " + c.task.eval_queries + " against " + c.task.eval_corpus + " (" +
                          c.task.eval_qrels + ")")
            << (c.task.eval.empty() && c.task.eval_queries.empty() ? "" : " by " + c.task.eval_kind)
            << "\n";
  if (absl::StatusOr<TaskPtr> task = MakeTask(c.task); task.ok()) {
    std::cout << "loss     " << (*task)->Describe() << "\n";
  }
  std::cout << "train    epochs " << c.train.epochs << ", max_steps " << c.train.max_steps
            << ", batch " << c.train.batch_size << " x grad_accum " << c.train.grad_accum << ", lr "
            << c.train.lr << " (" << c.train.schedule << ", warmup " << c.train.warmup_ratio
            << "), " << c.train.precision << ", seed " << c.train.seed << "\n"
            << "output   " << c.output.dir << " (save " << c.output.save << ")\n"
            << "device   " << device.device.str() << " (" << device.name << "), "
            << DescribeLibTorch() << std::endl;
}

// NVML's view of the trainer's GPU (seed 004's "GPU memory occupied"), beside the allocator's
// peak: memory used on the GPU by every process, and by this one (CUDA context and the caching
// allocator's reserve included); "" where NVML or the GPU cannot be found.
std::string NvmlMemoryLine(int cuda_index) {
  const std::vector<GpuInfo> gpus = DetectGpus();
  if (cuda_index < 0 || cuda_index >= static_cast<int>(gpus.size())) return "";
  std::string why;
  std::unique_ptr<Nvml> nvml = Nvml::Load(&why);
  if (nvml == nullptr) return absl::StrCat("memory   NVML: none (", why, ")\n");
  absl::StatusOr<Nvml::Device> device = nvml->DeviceByPciBusId(gpus[cuda_index].pci_bus_id);
  if (!device.ok()) return absl::StrCat("memory   NVML: ", device.status().message(), "\n");
  absl::StatusOr<GpuSample> sample = nvml->Sample(*device);
  if (!sample.ok()) return absl::StrCat("memory   NVML: ", sample.status().message(), "\n");
  std::string line = absl::StrFormat("memory   NVML: %.2f GiB used on the GPU of %.2f GiB",
                                     sample->mem_used_mib / 1024, sample->mem_total_mib / 1024);
  if (std::optional<double> mine = nvml->ProcessMemoryMib(*device, ::getpid())) {
    absl::StrAppend(&line, absl::StrFormat(", %.2f GiB by this process", *mine / 1024));
  }
  return line + "\n";
}

// Whether a launcher (torchrun, the agent, or this trainer as its own launcher) started this
// process as one rank: then the ranks are its business, and train.devices is ignored.
bool UnderLauncher() {
  return std::getenv("RANK") != nullptr || std::getenv("WORLD_SIZE") != nullptr ||
         std::getenv("TUNEFLEET_AGENT_ENDPOINT") != nullptr;
}

// The GPUs this process could train on, as CUDA_VISIBLE_DEVICES ids; none when this LibTorch
// has no CUDA (the Bazel build), whatever the machine has.
std::vector<std::string> LocalGpus() {
  std::vector<std::string> ids;
  if (!torch::cuda::is_available()) return ids;
  for (const GpuInfo& gpu : DetectGpus()) ids.push_back(gpu.id);
  return ids;
}

// `--gpu_ids 0,2,3` -> "[0,2,3]" (train.devices' list); an error for anything but ids.
absl::StatusOr<std::string> GpuIdsOverride(const std::string& flag) {
  for (absl::string_view id : absl::StrSplit(flag, ',')) {
    if (id.empty() || id.find_first_not_of("0123456789") != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--gpu_ids: expected GPU ids such as 0,1,2, got '", flag, "'"));
    }
  }
  return absl::StrCat("train.devices=[", flag, "]");
}

// The parent of train.devices' ranks: says how they split the batch, then starts and waits for
// them (trainer/distributed/local_ranks.h).
int LaunchLocalRanks(const TrainerConfig& config, const std::vector<std::string>& args,
                     const std::vector<std::string>& gpus, bool dry_run) {
  const TrainConfig& t = config.train;
  const int ranks = static_cast<int>(LocalRankCount(t, static_cast<int>(gpus.size())));
  LocalRanksSpec spec;
  spec.ranks = ranks;
  spec.cuda_visible_devices = RankGpus(ranks, t.gpu_ids, gpus);
  std::string where = "Gloo on the CPU";
  if (!spec.cuda_visible_devices.empty()) {
    std::vector<int64_t> ids = t.gpu_ids;
    if (ids.empty()) {
      for (int i = 0; i < ranks; ++i) ids.push_back(i);
    }
    where = absl::StrCat("NCCL on GPU", ids.size() == 1 ? " " : "s ", absl::StrJoin(ids, ", "));
  }
  std::string line = absl::StrFormat(
      "ranks    %d local ranks (%s), started by this trainer; global batch %d x %d = %d", ranks,
      where, t.batch_size, ranks, t.batch_size * ranks);
  if (t.grad_accum > 1) {
    absl::StrAppend(&line, " (x grad_accum ", t.grad_accum, " = ",
                    t.batch_size * ranks * t.grad_accum, " per step)");
  }
  absl::StrAppend(&line, absl::StrFormat(", lr %g (train.lr as given: not rescaled)\n", t.lr));
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
  if (dry_run) {
    PrintConfig(config, SelectDevice(-1));
    return kExitOk;
  }
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  spec.binary = n > 0 ? std::string(self, static_cast<size_t>(n)) : "/proc/self/exe";
  spec.args = {"train"};
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  if (spec.cuda_visible_devices.empty()) {
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    spec.omp_threads = cores / ranks > 1 ? cores / ranks : 1;
  }
  return RunLocalRanks(spec, kProgram);
}

// The command line, as given; `overrides` are its key=value arguments, then --gpu_ids'.
struct TrainFlags {
  std::string config_path, gpu_ids;
  bool dry_run = false, resume = false;
  std::vector<std::string> overrides;
};

// Reads the flags into `f`: -1 to go on, else the exit code (--help, a bad command line).
int ParseTrainFlags(const std::vector<std::string>& args, TrainFlags* f) {
  CommandLine cli(kProgram, "[key=value ...]",
                  "Trains a model as the trainer YAML describes; key=value arguments override it\n"
                  "(train.lr=3e-5 model.pooling=cls), as Hydra's do: +key=value adds a key the\n"
                  "file lacks, ++key=value adds or sets, ~key removes one (~key=value: only if it\n"
                  "holds value). Writes OUTPUT_DIR/metrics.jsonl, the model\n"
                  "(OUTPUT_DIR/model) and a checkpoint to resume from (OUTPUT_DIR/checkpoint).");
  cli.AddString("config", &f->config_path, "trainer YAML (required)", "TRAIN.yaml");
  cli.AddBool("resume", &f->resume, "continue from OUTPUT_DIR/checkpoint");
  cli.AddBool("dry_run", &f->dry_run,
              "validate the config, print it with the device; train nothing (with --json: one "
              "JSON object, trainer/commands/train_dry_run.h)");
  cli.AddString("gpu_ids", &f->gpu_ids,
                "train on these GPUs, one rank each (train.devices=[0,1,2]; wins over it)",
                "0,1,2");
  cli.AllowOverrides();
  cli.AddHelpEpilog(TrainerConfigHelp());  // every key, from the schema
  if (int rc = ParseOrExit(cli, args, kProgram); rc >= 0) return rc;
  if (f->config_path.empty()) {
    PrintError(kProgram, absl::InvalidArgumentError("--config is required"));
    return kExitUsage;
  }
  f->overrides = cli.overrides();
  return -1;
}

// The trainer YAML with the overrides and --gpu_ids (added to f->overrides) applied. `gpus`:
// this machine's, none under a launcher.
absl::StatusOr<TrainerConfig> LoadConfig(TrainFlags* f, bool under_launcher,
                                         const std::vector<std::string>& gpus) {
  if (!f->gpu_ids.empty()) {
    absl::StatusOr<std::string> devices = GpuIdsOverride(f->gpu_ids);
    if (devices.ok() && !under_launcher && gpus.empty()) {
      devices = absl::InvalidArgumentError(
          absl::StrCat("--gpu_ids ", f->gpu_ids,
                       ": this machine has no GPU (train.devices=N: N ranks on the CPU)"));
    }
    if (!devices.ok()) return devices.status();
    f->overrides.push_back(*devices);
  }
  return LoadTrainerConfig(f->config_path, f->overrides,
                           under_launcher ? kUnknownGpus : static_cast<int>(gpus.size()));
}

// The run's resolved config beside its output, for re-running it alone (as Hydra's
// .hydra/config.yaml). A job a launcher started records its world size as train.devices.
absl::Status WriteRunConfig(const TrainerConfig& config, const std::vector<std::string>& overrides,
                            const comm::DistEnv& env, bool under_launcher) {
  const bool launched = under_launcher && std::getenv(kLocalRanksEnv) == nullptr;
  TrainerConfig resolved = config;  // train.batch_sampler: the loss's default when unset
  if (absl::StatusOr<TaskPtr> task = MakeTask(config.task); task.ok()) {
    resolved.train.batch_sampler =
        ResolveBatchSampler(config.train.batch_sampler, (*task)->in_batch_negatives());
  }
  if (absl::Status s = WriteResolvedConfig(resolved, overrides, launched ? env.world_size : 1);
      !s.ok()) {
    return absl::PermissionDeniedError(absl::StrCat("output.dir: ", s.message()));
  }
  return absl::OkStatus();
}

// `status` with "rank N: " before its message.
absl::Status OnRank(int rank, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("rank ", rank, ": ", status.message()));
}

// The ranks' process group under a launcher (a warm worker's may be its previous trial's); null
// for one process.
absl::StatusOr<std::unique_ptr<TrialGroup>> OpenGroup(const comm::DistEnv& env,
                                                      const DeviceInfo& device,
                                                      const TrainerConfig& config) {
  if (!env.distributed()) return std::unique_ptr<TrialGroup>();
  MakeCurrent(device.device);
  const auto backend = device.device.is_cuda() ? comm::ProcessGroup::Backend::kNccl
                                               : comm::ProcessGroup::Backend::kGloo;
  auto opened = TrialGroup::Open(env, backend, std::chrono::seconds(config.train.ddp_timeout_s));
  if (!opened.ok()) return OnRank(env.rank, opened.status());
  if (env.rank == 0) std::cout << "group    " << (*opened)->description() << std::endl;
  return std::move(*opened);
}

// One rank of the run: where it trains, and what links it to the other ranks and to the agent.
// RunTrain keeps it until it returns: a group destroyed unclosed (a failed run) is aborted.
struct Rank {
  comm::DistEnv env;
  DeviceInfo device;
  std::unique_ptr<TrialGroup> group;    // under a launcher; a warm worker's may be kept
  std::unique_ptr<AgentClient> client;  // under an agent
};

// Trains this rank, and ends (or keeps) its group with the others: the summary, or the error
// with the exit code it gives in `exit_code`.
absl::StatusOr<TrainSummary> TrainRank(const TrainerConfig& config, const TrainFlags& flags,
                                       Rank* rank, int* exit_code) {
  const comm::DistEnv& env = rank->env;
  *exit_code = kExitFailure;
  absl::StatusOr<std::unique_ptr<TrialGroup>> group = OpenGroup(env, rank->device, config);
  if (!group.ok()) return group.status();
  rank->group = *std::move(group);
  auto client = AgentClient::FromEnvironment();
  if (!client.ok()) return client.status();
  rank->client = *std::move(client);
  if (rank->client != nullptr) SetLogTrial(rank->client->trial());
  TrainOptions options;
  options.device = rank->device.device;
  options.resume = flags.resume;
  options.client = rank->client.get();
  options.group = rank->group != nullptr ? rank->group->get() : nullptr;
  auto summary = RunTraining(config, options);
  if (!summary.ok()) {
    *exit_code = ExitCodeFor(summary.status());
    return env.distributed() ? OnRank(env.rank, summary.status()) : summary.status();
  }
  if (rank->group != nullptr) {  // no NCCL warning at exit: every rank ends (or keeps) it together
    if (absl::Status s = rank->group->Close(); !s.ok()) return OnRank(env.rank, s);
  }
  *exit_code = kExitOk;
  return summary;
}

// Rank 0's report of a finished run: steps, best metric, times, memory, where the model is.
void PrintSummary(const TrainSummary& s, const DeviceInfo& device, const TrainerConfig& config) {
  std::printf("done     %lld/%lld steps in %.1f s%s", static_cast<long long>(s.steps),
              static_cast<long long>(s.total_steps), s.seconds,
              s.stopped ? " (stopped by the pruner)" : "");
  if (s.best_step >= 0) {
    std::printf("; best %s %.5g at step %lld", s.primary_metric.c_str(), s.best,
                static_cast<long long>(s.best_step));
  }
  const TrainSummary::Times& t = s.times;
  std::printf(
      "\ntime     setup %.2f s (model %.2f s, data %.2f s); first step %.2f s, steps %.2f s",
      t.setup, t.setup_model, t.setup_data, t.first_step, t.steps);
  if (s.cuda_graphs > 0) std::printf(" (%.2f s of it capturing CUDA graphs)", t.captures);
  std::printf(", evaluation %.2f s, saving %.2f s, reports %.2f s", t.evaluation, t.saving,
              t.reports);
  std::printf("\nmemory   peak %.2f GiB %s (estimate %.2f GiB)\n", GiB(s.peak_bytes),
              device.device.is_cuda() ? "allocated on the GPU" : "resident (whole process)",
              GiB(s.estimate_bytes));
  if (device.device.is_cuda()) std::fputs(NvmlMemoryLine(device.device.index()).c_str(), stdout);
  std::printf("memory   AdamW state %.2f MiB on this rank", Mib(s.optimizer_state_bytes));
  if (s.optimizer_shards > 1) {
    std::printf(" (zero1: its 1/%d share of %.2f MiB)", s.optimizer_shards,
                Mib(s.optimizer_state_unsharded_bytes));
  }
  std::printf("\n");
  if (config.output.save != "none") {
    std::printf("model    %s/model\n", config.output.dir.c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int RunTrain(const std::vector<std::string>& args) {
  // The JSON dry run hpo asks for: here, where the loss registry checks task.type's keys.
  if (WantsDryRunJson(args)) return RunTrainDryRunJson(args);
  TrainFlags flags;
  if (int rc = ParseTrainFlags(args, &flags); rc >= 0) return rc;
  const bool under_launcher = UnderLauncher();
  const std::vector<std::string> gpus = under_launcher ? std::vector<std::string>() : LocalGpus();
  absl::StatusOr<TrainerConfig> config = LoadConfig(&flags, under_launcher, gpus);
  if (!config.ok()) {
    PrintError(kProgram, config.status());
    return kExitUsage;
  }
  if (!under_launcher && LocalRankCount(config->train, static_cast<int>(gpus.size())) > 1) {
    return LaunchLocalRanks(*config, args, gpus, flags.dry_run);
  }
  auto env = comm::DistEnv::FromEnvironment();
  if (!env.ok()) {
    PrintError(kProgram, env.status());
    return kExitUsage;
  }
  Rank rank;
  rank.env = *env;
  // One rank of its own on a listed GPU: that GPU.
  const int device_index = !under_launcher && !config->train.gpu_ids.empty()
                               ? static_cast<int>(config->train.gpu_ids[0])
                               : EnvInt("LOCAL_RANK", -1);
  rank.device = SelectDevice(device_index);
  if (env->rank == 0 && under_launcher && std::getenv(kLocalRanksEnv) == nullptr &&
      (config->train.devices != 1 || !config->train.gpu_ids.empty())) {
    std::cout << "note     train.devices ignored: ranks come from the launcher" << std::endl;
  }
  if (env->rank == 0) PrintConfig(*config, rank.device);
  if (flags.dry_run) return kExitOk;
  if (env->rank == 0) {
    if (absl::Status s = WriteRunConfig(*config, flags.overrides, *env, under_launcher); !s.ok()) {
      PrintError(kProgram, s);
      return kExitUsage;
    }
  }
  int code = kExitFailure;
  absl::StatusOr<TrainSummary> summary = TrainRank(*config, flags, &rank, &code);
  if (!summary.ok()) {
    PrintError(kProgram, summary.status());
    return code;
  }
  if (env->rank == 0) PrintSummary(*summary, rank.device, *config);
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
