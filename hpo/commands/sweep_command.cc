#include "hpo/commands/sweep_command.h"

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/cli.h"
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

}  // namespace

int RunSweep(const SweepOptions& o, SignalFd* signals) {
  // A dry run starts no thread and no child: let SIGINT / SIGTERM stop it as they stop any
  // program (main() blocked them for the sweep's poll loop).
  if (o.dry_run) UnblockStopSignals();
  auto config = LoadSweepConfig(o.sweep_file, o.overrides, o.multirun);
  if (!config.ok()) {
    PrintError("hpo sweep", config.status());
    return kExitUsage;
  }
  for (const std::string& note : config->notes) std::cerr << "note     " << note << "\n";
  if (!o.journal.empty()) config->journal = o.journal;
  for (absl::Status bad : {CheckJournalPath(config->journal), CheckSweepTrainerFiles(*config),
                           CheckPlanSize(*config)}) {
    if (!bad.ok()) {
      PrintError("hpo sweep", bad);
      return kExitUsage;
    }
  }
  if (!o.dry_run) {
    absl::Status bad = CheckJournalWritable(config->journal);
    if (bad.ok()) bad = ReadJournalToResume(*config, o.resume).status();
    if (bad.ok() && o.head.empty()) {
      const LocalHost host = ThisHost();
      bad = CheckDevModeRanks(*config, host.gpus, host.cpus, o.slots);
      if (bad.ok()) bad = CheckDevModeBatchSizes(*config, host);
    }
    if (!bad.ok()) {
      PrintError("hpo sweep", bad);
      return kExitUsage;
    }
  }
  if (o.dry_run) {
    std::cout << DescribeSweepPlan(*config);
    return kExitOk;
  }
  const std::string run_dir =
      config->journal.rfind('/') == std::string::npos ? "." : config->journal.substr(0, config->journal.rfind('/'));
  std::unique_ptr<DevCluster> cluster;
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
            << " at a time, pruner " << config->pruner->type() << "; journal " << config->journal << std::endl;
  if (o.head.empty()) {
    DevCluster::Options dev;
    dev.slots = o.slots > 0 ? o.slots : config->max_concurrent_trials * config->gpus_per_trial;
    dev.log_dir = run_dir + "/logs";
    for (const auto& [name, value] : config->env) dev.allow_env.push_back(name);
    auto started = DevCluster::Start(dev);
    if (!started.ok()) {
      PrintError("hpo sweep", started.status());
      return kExitFailure;
    }
    cluster = std::move(*started);
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
