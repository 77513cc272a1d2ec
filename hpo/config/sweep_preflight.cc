#include "hpo/config/sweep_preflight.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clip.h"
#include "common/file_util.h"
#include "common/gpu_detect.h"
#include "common/status_macros.h"
#include "hpo/config/sweep_plan.h"
#include "hpo/journal/journal_file.h"

namespace tunefleet {
namespace hpo {

absl::Status CheckPlanSize(const SweepConfig& config) {
  const int64_t planned = MaxPlannedTrials(config);
  if (planned <= kMaxPlannedTrials) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      config.source, ": search: the plan holds up to ", planned, " trials; the limit is ",
      kMaxPlannedTrials, " (lower search.random.trials or search.grid.lr_points)"));
}

absl::Status CheckDevModeRanks(const SweepConfig& config, int gpus, int cpus, int64_t slots) {
  const int64_t ranks = config.gpus_per_trial;
  const int64_t have = gpus > 0 ? gpus : (slots > 0 ? slots : cpus);
  if (ranks <= have) return absl::OkStatus();
  const std::string what =
      gpus > 0 ? absl::StrCat(gpus, " GPU(s)")
               : (slots > 0 ? absl::StrCat("--slots ", slots) : absl::StrCat(cpus, " CPU core(s)"));
  return absl::InvalidArgumentError(
      absl::StrCat(config.source, ": resources.gpus_per_trial: ", ranks,
                   " ranks per trial, but dev mode runs on this host, which has ", what,
                   " (a cluster's trials may span nodes: --head)"));
}

namespace {

double GiB(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

}  // namespace

int CpusHere() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

LocalHost ThisHost() {
  LocalHost host;
  const std::vector<GpuInfo> gpus = DetectGpus();
  host.gpus = static_cast<int>(gpus.size());
  host.cpus = CpusHere();
  if (!gpus.empty()) {
    const GpuInfo* least = &gpus.front();
    for (const GpuInfo& g : gpus) {
      if (g.total_bytes < least->total_bytes) least = &g;
    }
    host.memory_bytes = static_cast<double>(least->total_bytes);
    host.memory_text =
        absl::StrFormat("the GPU's %.1f GiB (%s)", GiB(host.memory_bytes), least->name);
  } else {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) host.memory_bytes = static_cast<double>(pages) * page;
    host.memory_text = absl::StrFormat("this host's %.1f GiB of RAM", GiB(host.memory_bytes));
  }
  return host;
}

absl::Status CheckDevModeBatchSizes(const SweepConfig& config, const LocalHost& host) {
  if (!config.trainer.native() || host.memory_bytes <= 0) return absl::OkStatus();
  const TrainerPreflight& preflight = config.trainer.preflight;
  for (int64_t batch : config.batch_sizes) {
    // None where the model cannot be read here (CheckSweepTrainerFiles says why).
    auto it = preflight.memory.find(batch);
    if (it == preflight.memory.end() || it->second.least_bytes <= host.memory_bytes) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: parameters.batch_size: %d examples a step need at least %.1f GiB even at %d tokens "
        "a sequence (the trainer's memory estimate), more than %s",
        config.source, batch, GiB(it->second.least_bytes), preflight.least_tokens,
        host.memory_text));
  }
  return absl::OkStatus();
}

double TrialMemoryMib(const SweepConfig& config, int64_t batch) {
  if (config.trainer.synthetic) return config.trainer.synthetic_spec.memory_mib;
  if (config.trainer.program) return config.trainer.program_spec.gpu_memory_mib;
  const std::map<int64_t, BatchMemory>& memory = config.trainer.preflight.memory;
  auto it = memory.find(batch);
  return it == memory.end() ? 0 : it->second.bytes / (1024.0 * 1024.0);
}

absl::Status CheckJournalWritable(const std::string& journal) {
  const std::string folder = JournalFolder(journal);
  struct stat st;
  if (::stat(folder.c_str(), &st) != 0) return absl::OkStatus();  // made when the sweep starts
  const std::string probe = absl::StrCat(folder, "/.hpo-probe-", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    return absl::InvalidArgumentError(absl::StrCat("journal ", ClipPath(journal),
                                                   ": cannot create files in ", ClipPath(folder),
                                                   ": ", std::strerror(err)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

absl::StatusOr<std::optional<JournalContents>> ReadJournalToResume(const SweepConfig& config,
                                                                   bool resume) {
  const std::string path = ClipPath(config.journal);
  struct stat st;
  if (::stat(config.journal.c_str(), &st) != 0 || st.st_size == 0) return std::nullopt;
  if (!resume) {
    return absl::AlreadyExistsError(
        absl::StrCat("journal ", path,
                     " already holds a sweep; pass --resume to continue it, or --journal "
                     "PATH to start another"));
  }
  absl::StatusOr<JournalContents> contents = ReadJournal(config.journal);
  if (!contents.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--resume: ", contents.status().message()));
  }
  if (contents->study_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--resume: journal ", path, " holds no study (not a journal of hpo or Optuna)"));
  }
  if (contents->study_name != config.name) {
    return absl::InvalidArgumentError(absl::StrCat("--resume: journal ", path, " holds sweep '",
                                                   ClipValue(contents->study_name), "', not '",
                                                   config.name, "'"));
  }
  if (contents->maximize != config.maximize) {
    return absl::InvalidArgumentError(
        absl::StrCat("--resume: journal ", path, " was made for the other metric goal (",
                     contents->maximize ? "maximize" : "minimize", "; ", config.source, " says ",
                     config.maximize ? "maximize" : "minimize", ")"));
  }
  return std::optional<JournalContents>(*std::move(contents));
}

}  // namespace hpo
}  // namespace tunefleet
