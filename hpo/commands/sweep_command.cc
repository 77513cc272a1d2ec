#include "hpo/commands/sweep_command.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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

// What the checks before a sweep leave: the sweep, and dev mode's local head and agent, started
// while the trainer answered (or not yet: a synthetic or program sweep starts them after its
// checks).
struct Prepared {
  SweepConfig config;
  bool dev_mode = false;
  std::unique_ptr<DevCluster> cluster;
  DevCluster::Options dev;
  absl::Status cluster_failed;
  std::string made;  // the logs folder's outermost new folder, removed on a usage error
  LocalHost host;    // dev mode: this host's GPUs and cores

  void StartCluster(const SweepOptions& o) {
    made = FirstMissing(JournalFolder(config.journal) + "/logs");
    auto started = StartDevCluster(config, o, dev);
    if (started.ok()) cluster = std::move(*started);
    cluster_failed = started.status();
  }
};

// The checks after the sweep file was read, in order: the journal, the plan's size, the
// trainer's answer and files, dev mode's host. Dev mode's head and agent start meanwhile.
absl::Status CheckSweep(const SweepOptions& o, Prepared& p) {
  SweepConfig& config = p.config;
  absl::Status bad = CheckJournalPath(config.journal);
  if (bad.ok()) bad = CheckPlanSize(config);
  if (bad.ok() && !o.dry_run) bad = CheckJournalWritable(config.journal);
  if (bad.ok() && !o.dry_run) bad = ReadJournalToResume(config, o.resume).status();
  if (bad.ok() && p.dev_mode && config.trainer.native()) p.StartCluster(o);
  if (bad.ok()) bad = AskTrainerFor(config, o.sweep_file);
  if (bad.ok()) bad = CheckSweepTrainerFiles(config);
  if (bad.ok() && o.head.empty() && config.trainer.program) {
    bad = CheckProgramHere(config.trainer.program_spec, o.sweep_file);  // dev mode's agent is here
  }
  if (bad.ok() && p.dev_mode) {
    p.host = ThisHost();
    bad = CheckDevModeRanks(config, p.host.gpus, p.host.cpus, o.slots);
    if (bad.ok()) bad = CheckDevModeBatchSizes(config, p.host);
  }
  return bad;
}

// Reads and checks the sweep into *p; -1 when it may run, else the exit code (after a usage
// error's line, with dev mode's cluster stopped and the folders it made removed).
int Prepare(const SweepOptions& o, Prepared* p) {
  auto config = ReadSweepFile(o.sweep_file, o.overrides, o.multirun);
  if (!config.ok()) {
    PrintError("hpo sweep", config.status());
    return kExitUsage;
  }
  for (const std::string& note : config->notes) std::cerr << "note     " << note << "\n";
  if (!o.journal.empty()) config->journal = o.journal;
  p->config = *std::move(config);
  p->dev_mode = !o.dry_run && o.head.empty();
  if (absl::Status bad = CheckSweep(o, *p); !bad.ok()) {
    p->cluster.reset();  // stops it
    if (!p->made.empty()) (void)RemoveTree(p->made);
    PrintError("hpo sweep", bad);
    return kExitUsage;
  }
  return -1;
}

SweepDriver::Options DriverOptions(const SweepOptions& o) {
  SweepDriver::Options options;
  options.head = o.head;
  options.keys_dir = o.keys;
  options.head_grace = absl::Seconds(o.head_grace_s);
  options.resume = o.resume;
  options.report_json = o.report_json;
  options.live = ::isatty(STDOUT_FILENO) != 0;
  return options;
}

// Dev mode: the driver talks to the local head and watches it and the agent. False (after the
// error's line) when they could not start.
bool UseDevCluster(Prepared& p, SweepDriver::Options& options) {
  if (p.cluster == nullptr) {
    PrintError("hpo sweep", p.cluster_failed);
    return false;
  }
  options.head = p.cluster->endpoint();
  DevCluster* c = p.cluster.get();
  options.health_check = [c]() { return c->CheckAlive(); };  // restarts a dead head or agent
  // A restarted head hands the trials back: wait for it (--head_grace_s 0 would fail at once).
  if (options.head_grace <= absl::ZeroDuration()) options.head_grace = absl::Minutes(1);
  std::cout << "dev mode: local head and agent (" << DevModeSlots(p.dev.slots, p.host, p.config)
            << "); logs in " << p.dev.log_dir << std::endl;
  return true;
}

// The sweep's last words (summary, report, resume hint, failure) and its exit code.
int Conclude(const SweepOptions& o, const SweepConfig& config, const SweepDriver& driver,
             const absl::Status& result) {
  std::cout << driver.Summary();
  if (const std::string html = ReportPathFor(config.journal); ::access(html.c_str(), R_OK) == 0) {
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

}  // namespace

std::string DevModeSlots(int64_t slots, const LocalHost& host, const SweepConfig& config) {
  if (host.gpus > 0) {
    return absl::StrCat(slots, " slot(s)",
                        config.trials_per_gpu > 1
                            ? absl::StrCat(", up to ", config.trials_per_gpu, " trials a GPU")
                            : std::string());
  }
  // The agent runs CPU slots: trials never share one (resources.trials_per_gpu is for GPUs).
  return absl::StrCat(slots, " CPU slot(s) on ", host.cpus, " core(s), 1 ",
                      config.gpus_per_trial > 1 ? "rank" : "trial", " a slot");
}

int RunSweep(const SweepOptions& o, SignalFd* signals) {
  // A dry run starts no thread and no child: let SIGINT / SIGTERM stop it as they stop any
  // program (main() blocked them for the sweep's poll loop).
  if (o.dry_run) UnblockStopSignals();
  Prepared p;
  if (int rc = Prepare(o, &p); rc >= 0) return rc;
  if (o.dry_run) {
    std::cout << DescribeSweepPlan(p.config);
    return kExitOk;
  }
  if (p.dev_mode && p.cluster == nullptr && p.cluster_failed.ok()) p.StartCluster(o);
  SweepDriver::Options options = DriverOptions(o);
  if (options.live) SetMinLogLevel(LogLevel::kWARNING);  // keep the live table readable
  std::cout << "sweep " << p.config.name << ": " << p.config.method << ", up to "
            << MaxPlannedTrials(p.config) << " trials, " << p.config.max_concurrent_trials
            << " at a time, pruner " << p.config.pruner->type() << "; journal " << p.config.journal
            << std::endl;
  if (o.head.empty() && !UseDevCluster(p, options)) return kExitFailure;
  SweepDriver driver(p.config, options, signals);
  absl::Status result = driver.Run();
  if (p.cluster) p.cluster->Stop();
  return Conclude(o, p.config, driver, result);
}

int SweepCommand(const std::vector<std::string>& args, SignalFd* signals) {
  SweepOptions options;
  if (int rc = SweepOptions::FromFlags(args, &options); rc >= 0) return rc;
  return RunSweep(options, signals);
}

}  // namespace hpo
}  // namespace tunefleet
