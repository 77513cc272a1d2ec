#include "hpo/commands/sweep_command.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "hpo/config/sweep_config.h"
#include "hpo/config/sweep_plan.h"
#include "hpo/config/sweep_preflight.h"
#include "hpo/config/trainer_files.h"
#include "hpo/dev_cluster.h"
#include "hpo/journal/journal_file.h"
#include "hpo/report/report.h"
#include "hpo/sweep_driver.h"

namespace tunefleet {
namespace hpo {
namespace {

// Undoes main()'s blocking of SIGINT, SIGTERM and SIGHUP in this thread, so that they act as
// their dispositions say (terminate, unless the parent made them ignored); pending ones arrive
// now.
void UnblockStopSignals() {
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
  pthread_sigmask(SIG_UNBLOCK, &mask, nullptr);
}

// The outermost folder of `dir` that does not exist yet ("" when `dir` exists): what making
// `dir` creates.
std::string FirstMissing(const std::string& dir) {
  std::string missing;
  for (std::string d = dir; !d.empty() && d != "." && d != "/" && !PathExists(d);) {
    missing = d;
    const size_t slash = d.rfind('/');
    d = slash == std::string::npos ? "" : d.substr(0, slash);
  }
  return missing;
}

// Dev mode's local head and agent for `config`, logging beside its journal. Where its trials
// run in warm workers, the agent starts one per concurrent rank at once (--prewarm_workers; no
// more than the slots or this host's cores), so that their LibTorch start overlaps the
// trainer's dry run (AskTrainerFor).
absl::StatusOr<std::unique_ptr<DevCluster>> StartDevCluster(const SweepConfig& config,
                                                            const SweepOptions& o,
                                                            DevCluster::Options& dev) {
  dev.slots = o.slots > 0 ? o.slots : config.max_concurrent_trials * config.gpus_per_trial;
  dev.log_dir = JournalFolder(config.journal) + "/logs";
  dev.allow_dirs = {JournalFolder(config.journal)};  // the trials' folders (a program's made there)
  if (config.reuse_workers && config.trainer.native()) {
    dev.prewarm_workers = std::min<int64_t>(
        {dev.slots, config.max_concurrent_trials * config.gpus_per_trial, CpusHere()});
  }
  dev.prewarm_mps = config.trials_per_gpu > 1;  // where the host has MPS
  for (const auto& [name, value] : config.env) dev.allow_env.push_back(name);
  for (const auto& [name, value] : config.trainer.program_spec.env) dev.allow_env.push_back(name);
  return DevCluster::Start(dev);
}

}  // namespace

int RunSweep(const SweepOptions& o, SignalFd* signals) {
  // A dry run starts no thread and no child: let SIGINT / SIGTERM stop it as they stop any
  // program (main() blocked them for the sweep's poll loop).
  if (o.dry_run) UnblockStopSignals();
  auto config = ReadSweepFile(o.sweep_file, o.overrides, o.multirun);
  if (!config.ok()) {
    PrintError("hpo sweep", config.status());
    return kExitUsage;
  }
  for (const std::string& note : config->notes) std::cerr << "note     " << note << "\n";
  if (!o.journal.empty()) config->journal = o.journal;
  absl::Status bad = CheckJournalPath(config->journal);
  if (bad.ok()) bad = CheckPlanSize(*config);
  if (bad.ok() && !o.dry_run) bad = CheckJournalWritable(config->journal);
  if (bad.ok() && !o.dry_run) bad = ReadJournalToResume(*config, o.resume).status();
  // Dev mode: the local head and agent start while the trainer answers (a usage error below
  // stops them again); a synthetic or program sweep asks no trainer, and starts them after its
  // checks.
  const bool dev_mode = !o.dry_run && o.head.empty();
  std::unique_ptr<DevCluster> cluster;
  DevCluster::Options dev;
  absl::Status cluster_failed;
  std::string made;  // the logs folder's outermost new folder, removed on a usage error
  auto start_cluster = [&] {
    made = FirstMissing(JournalFolder(config->journal) + "/logs");
    auto started = StartDevCluster(*config, o, dev);
    if (started.ok()) cluster = std::move(*started);
    cluster_failed = started.status();
  };
  if (bad.ok() && dev_mode && config->trainer.native()) start_cluster();
  if (bad.ok()) bad = AskTrainerFor(*config, o.sweep_file);
  if (bad.ok()) bad = CheckSweepTrainerFiles(*config);
  if (bad.ok() && o.head.empty() && config->trainer.program) {
    bad = CheckProgramHere(config->trainer.program_spec, o.sweep_file);  // dev mode's agent is here
  }
  if (bad.ok() && dev_mode) {
    const LocalHost host = ThisHost();
    bad = CheckDevModeRanks(*config, host.gpus, host.cpus, o.slots);
    if (bad.ok()) bad = CheckDevModeBatchSizes(*config, host);
  }
  if (!bad.ok()) {
    cluster.reset();  // stops it
    if (!made.empty()) (void)RemoveTree(made);
    PrintError("hpo sweep", bad);
    return kExitUsage;
  }
  if (o.dry_run) {
    std::cout << DescribeSweepPlan(*config);
    return kExitOk;
  }
  if (dev_mode && cluster == nullptr && cluster_failed.ok()) start_cluster();
  SweepDriver::Options options;
  options.head = o.head;
  options.keys_dir = o.keys;
  options.head_grace = absl::Seconds(o.head_grace_s);
  options.resume = o.resume;
  options.report_json = o.report_json;
  options.live = ::isatty(STDOUT_FILENO) != 0;
  if (options.live) SetMinLogLevel(LogLevel::kWARNING);  // keep the live table readable
  std::cout << "sweep " << config->name << ": " << config->method << ", up to "
            << MaxPlannedTrials(*config) << " trials, " << config->max_concurrent_trials
            << " at a time, pruner " << config->pruner->type() << "; journal " << config->journal
            << std::endl;
  if (o.head.empty()) {
    if (cluster == nullptr) {
      PrintError("hpo sweep", cluster_failed);
      return kExitFailure;
    }
    options.head = cluster->endpoint();
    DevCluster* c = cluster.get();
    options.health_check = [c]() { return c->CheckAlive(); };  // restarts a dead head or agent
    // A restarted head hands the trials back: wait for it (--head_grace_s 0 would fail at once).
    if (options.head_grace <= absl::ZeroDuration()) options.head_grace = absl::Minutes(1);
    std::cout << "dev mode: local head and agent (" << dev.slots << " slot(s)"
              << (config->trials_per_gpu > 1
                      ? absl::StrCat(", up to ", config->trials_per_gpu, " trials a GPU")
                      : std::string())
              << "); logs in " << dev.log_dir << std::endl;
  }
  SweepDriver driver(*config, options, signals);
  absl::Status result = driver.Run();
  if (cluster) cluster->Stop();
  std::cout << driver.Summary();
  if (const std::string html = ReportPathFor(config->journal); ::access(html.c_str(), R_OK) == 0) {
    std::cout << "report: " << html << "\n";
  }
  if (absl::IsCancelled(result)) {
    std::cout << "interrupted; continue with: " << o.ResumeCommand() << "\n";
    return 130;
  }
  if (!result.ok()) {
    PrintError("hpo sweep", result);
    return absl::IsInvalidArgument(result) ? kExitUsage : kExitFailure;  // e.g. a cluster too small
  }
  if (std::optional<std::string> failed = SweepFailure(driver.Outcome(), o.max_failed_share)) {
    std::cout << "the sweep failed: " << *failed << " (exit code " << kExitSweepFailed << ")\n";
    return kExitSweepFailed;
  }
  return kExitOk;
}

int SweepCommand(const std::vector<std::string>& args, SignalFd* signals) {
  SweepOptions options;
  if (int rc = SweepOptions::FromFlags(args, &options); rc >= 0) return rc;
  return RunSweep(options, signals);
}

}  // namespace hpo
}  // namespace tunefleet
