#include "trainer/train_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "comm/process_group.h"
#include "common/cli.h"
#include "common/gpu_detect.h"
#include "common/logging.h"
#include "common/nvml.h"
#include "trainer/agent_client.h"
#include "trainer/device.h"
#include "trainer/memory_estimate.h"
#include "trainer/train_config.h"
#include "trainer/train_loop.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer train";

int ExitCodeFor(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kResourceExhausted: return kExitOutOfMemory;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnimplemented: return kExitUsage;
    default: return kExitFailure;
  }
}

void PrintConfig(const TrainerConfig& c, const DeviceInfo& device) {
  std::cout << "config   " << c.source << "\n"
            << "model    " << c.model.path << " (pooling " << c.model.pooling << ", max_seq_len "
            << c.model.max_seq_len << ", dropout " << c.model.dropout << ")\n"
            << "task     " << c.task.type << " on " << c.task.train << " (" << c.task.format
            << ")" << (c.task.eval.empty() ? "" : ", eval " + c.task.eval) << "\n"
            << "train    epochs " << c.train.epochs << ", max_steps " << c.train.max_steps
            << ", batch " << c.train.batch_size << " x grad_accum " << c.train.grad_accum
            << ", lr " << c.train.lr << " (" << c.train.schedule << ", warmup "
            << c.train.warmup_ratio << "), " << c.train.precision << ", seed " << c.train.seed
            << "\n"
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

}  // namespace

int RunTrain(const std::vector<std::string>& args) {
  std::string config_path;
  bool dry_run = false, resume = false;
  CommandLine cli(kProgram, "[key=value ...]",
                  "Trains a model as the trainer YAML describes; key=value arguments override it\n"
                  "(train.lr=3e-5 model.pooling=cls). Writes OUTPUT_DIR/metrics.jsonl, the model\n"
                  "(OUTPUT_DIR/model) and a checkpoint to resume from (OUTPUT_DIR/checkpoint).");
  cli.AddString("config", &config_path, "trainer YAML (required)", "TRAIN.yaml");
  cli.AddBool("resume", &resume, "continue from OUTPUT_DIR/checkpoint");
  cli.AddBool("dry_run", &dry_run, "validate the config, print it with the device; train nothing");
  cli.AllowOverrides();
  if (int rc = ParseOrExit(cli, args, kProgram); rc >= 0) return rc;
  if (config_path.empty()) {
    PrintError(kProgram, absl::InvalidArgumentError("--config is required"));
    return kExitUsage;
  }
  auto config = LoadTrainerConfig(config_path, cli.overrides());
  if (!config.ok()) {
    PrintError(kProgram, config.status());
    return kExitUsage;
  }
  auto env = comm::DistEnv::FromEnvironment();
  if (!env.ok()) {
    PrintError(kProgram, env.status());
    return kExitUsage;
  }
  const DeviceInfo device = SelectDevice(EnvInt("LOCAL_RANK", -1));
  if (env->rank == 0) PrintConfig(*config, device);
  if (dry_run) return kExitOk;

  std::unique_ptr<comm::ProcessGroup> group;
  if (env->distributed()) {
    MakeCurrent(device.device);
    const auto backend = device.device.is_cuda() ? comm::ProcessGroup::Backend::kNccl
                                                 : comm::ProcessGroup::Backend::kGloo;
    auto connected = comm::ProcessGroup::Connect(
        *env, backend, std::chrono::seconds(config->train.ddp_timeout_s));
    if (!connected.ok()) {
      PrintError(kProgram, absl::Status(connected.status().code(),
                                        absl::StrCat("rank ", env->rank, ": ",
                                                     connected.status().message())));
      return kExitFailure;
    }
    group = std::move(*connected);
  }

  auto client = AgentClient::FromEnvironment();
  if (!client.ok()) {
    PrintError(kProgram, client.status());
    return kExitFailure;
  }
  if (*client != nullptr) SetLogTrial((*client)->trial());
  TrainOptions options;
  options.device = device.device;
  options.resume = resume;
  options.client = client->get();
  options.group = group.get();
  auto summary = RunTraining(*config, options);
  if (!summary.ok()) {
    PrintError(kProgram, env->distributed()
                             ? absl::Status(summary.status().code(),
                                            absl::StrCat("rank ", env->rank, ": ",
                                                         summary.status().message()))
                             : summary.status());
    return ExitCodeFor(summary.status());
  }
  if (env->rank != 0) return kExitOk;
  const TrainSummary& s = *summary;
  std::printf("done     %lld/%lld steps in %.1f s%s", static_cast<long long>(s.steps),
              static_cast<long long>(s.total_steps), s.seconds,
              s.stopped ? " (stopped by the pruner)" : "");
  if (s.best_step >= 0) {
    std::printf("; best %s %.5g at step %lld", s.primary_metric.c_str(), s.best,
                static_cast<long long>(s.best_step));
  }
  const TrainSummary::Times& t = s.times;
  std::printf("\ntime     setup %.2f s (model %.2f s, data %.2f s); first step %.2f s, steps %.2f s",
              t.setup, t.setup_model, t.setup_data, t.first_step, t.steps);
  if (s.cuda_graphs > 0) std::printf(" (%.2f s of it capturing CUDA graphs)", t.captures);
  std::printf(", evaluation %.2f s, saving %.2f s, reports %.2f s", t.evaluation, t.saving,
              t.reports);
  std::printf("\nmemory   peak %.2f GiB %s (estimate %.2f GiB)\n", GiB(s.peak_bytes),
              device.device.is_cuda() ? "allocated on the GPU" : "resident (whole process)",
              GiB(s.estimate_bytes));
  if (device.device.is_cuda()) std::fputs(NvmlMemoryLine(device.device.index()).c_str(), stdout);
  if (config->output.save != "none") {
    std::printf("model    %s/model\n", config->output.dir.c_str());
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
