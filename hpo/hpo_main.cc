// hpo: runs sweeps (random-then-grid search, linear LR scaling, early stopping) and reads
// their journals.
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/binary_path.h"
#include "common/cli.h"
#include "common/clip.h"
#include "common/logging.h"
#include "common/signals.h"
#include "hpo/dev_cluster.h"
#include "hpo/journal/journal_file.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/report/progress_table.h"
#include "hpo/report/report.h"
#include "hpo/search_space.h"
#include "hpo/journal/study_json.h"
#include "hpo/config/sweep_config.h"
#include "hpo/sweep_driver.h"
#include "hpo/config/sweep_flags.h"
#include "hpo/config/sweep_plan.h"
#include "hpo/config/sweep_preflight.h"
#include "hpo/config/trainer_files.h"

namespace tunefleet {
namespace hpo {
namespace {

// Created in main() before any thread, so every thread (ZeroMQ's) inherits the blocked mask.
SignalFd* g_signals = nullptr;

// Undoes main()'s blocking of SIGINT, SIGTERM and SIGHUP in this thread, so that they act as
// their dispositions say (terminate, unless the parent made them ignored); pending ones arrive
// now.
void UnblockStopSignals() {
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
  pthread_sigmask(SIG_UNBLOCK, &mask, nullptr);
}

// `word` as the shell reads it back: bare when it holds only safe characters, else in single
// quotes.
std::string ShellWord(const std::string& word) {
  const bool safe = !word.empty() && word.find_first_not_of(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@+%") == std::string::npos;
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The command that continues an interrupted sweep: the same file, overrides, journal, head and
// keys, with --resume.
std::string ResumeCommand(const CommandLine& cli, bool multirun, const std::string& journal,
                          const std::string& head, const std::string& keys) {
  std::string command = "hpo sweep " + ShellWord(cli.positional()[0]);
  if (multirun) absl::StrAppend(&command, " --multirun");
  for (const std::string& o : cli.overrides()) absl::StrAppend(&command, " ", ShellWord(o));
  absl::StrAppend(&command, " --resume");
  if (!journal.empty()) absl::StrAppend(&command, " --journal ", ShellWord(journal));
  if (!head.empty()) absl::StrAppend(&command, " --head ", ShellWord(head));
  if (!keys.empty()) absl::StrAppend(&command, " --keys ", ShellWord(keys));
  return command;
}

int Sweep(const std::vector<std::string>& args) {
  std::string head, journal, report_json, keys;
  bool resume = false, dry_run = false, multirun = false;
  int64_t slots = 0, head_grace_s = 300;
  double max_failed_share = 0.5;
  CommandLine cli("hpo sweep", "SWEEP.yaml [key=value ...]",
                  "Runs the sweep described by SWEEP.yaml. Without --head it runs in single-node\n"
                  "dev mode: it starts a head and a local agent, uses every local GPU (or CPU\n"
                  "slots), and stops them when the sweep ends. key=value arguments override the\n"
                  "sweep file (search.random.trials=4), as Hydra's do: +key=value adds a key the\n"
                  "file lacks, ++key=value adds or sets, ~key removes one (~key=value: only if it\n"
                  "holds value). Setting early_terminate.type drops the file's keys of its old type.");
  cli.AddString("head", &head, "address of a running head; omit for single-node dev mode",
                "tcp://HOST:PORT");
  cli.AddString("journal", &journal, "journal file (default: the sweep's `journal`)", "PATH");
  cli.AddString("keys", &keys, "with --head: CURVE key folder (server.pub, client.key)", "DIR");
  cli.AddBool("resume", &resume, "continue the sweep recorded in the journal");
  cli.AddBool("dry_run", &dry_run, "validate the sweep and print its plan; run nothing");
  cli.AddInt("slots", &slots,
             "dev mode: ranks the local agent runs at once (CPU slots without GPUs; default "
             "max_concurrent_trials x gpus_per_trial)");
  cli.AddString("report_json", &report_json, "write hpo's final view of the study here", "PATH");
  cli.AddInt("head_grace_s", &head_grace_s,
             "with --head: after losing the head, wait this long for it to come back (its "
             "trials go on on the agents); 0: fail at once");
  cli.AddDouble("max_failed_share", &max_failed_share,
                "exit 3 when more than this share of the sweep's points failed after their "
                "retries (0 to 1)",
                "X");
  cli.AddBool("multirun", &multirun,
              "Hydra's multirun: a grid over exactly the values listed, KEY=a,b,c for each "
              "parameter KEY (lr, batch_size, a trainer key); see below");
  cli.AllowOverrides();
  cli.ExpectPositional(1, 1);
  cli.AddHelpEpilog(
      "--multirun: an override whose key is not a section of the sweep file names a parameter,\n"
      "and KEY=a,b,c becomes parameters.KEY: {values: [a, b, c]} (KEY=a: one value), replacing\n"
      "the file's; the search method becomes grid, so the sweep runs every combination of the\n"
      "values listed and nothing else. A parameter of the file that the command line does not\n"
      "name must take one value, else it is an error (sweep it too, or give it one value):\n"
      "  hpo sweep configs/lr.yaml --multirun lr=1e-5,3e-5,1e-4 batch_size=16,32   (6 trials)\n"
      "\n"
      "Exit codes:\n"
      "  0    the sweep ran to its end (with --dry_run: the plan was printed)\n"
      "  1    hpo failed: the head was lost or refused the sweep, the journal could not be\n"
      "       written, dev mode's head or agent died\n"
      "  2    bad input: flags, sweep file, trainer config, a missing trainer file (model\n"
      "       folder, task.train, task.eval, model.head), the journal path, a journal --resume\n"
      "       cannot continue, a plan over 10^6 trials, more ranks than the host (dev mode) or\n"
      "       the cluster has: all before anything started, but the last\n"
      "  3    the sweep ran but failed: no trial completed, or more than --max_failed_share of\n"
      "       its points failed after their retries; the summary's last line says which\n"
      "  130  interrupted (Ctrl-C, SIGTERM); continue with --resume");
  if (int rc = ParseOrExit(cli, args, "hpo sweep"); rc >= 0) return rc;
  SweepFlags flags;
  flags.head = head;
  flags.keys = keys;
  flags.slots = slots;
  flags.head_grace_s = head_grace_s;
  flags.max_failed_share = max_failed_share;
  if (absl::Status bad = CheckSweepFlags(flags); !bad.ok()) {
    PrintError("hpo sweep", bad);
    return kExitUsage;
  }
  // A dry run starts no thread and no child: let SIGINT / SIGTERM stop it as they stop any
  // program (main() blocked them for the sweep's poll loop).
  if (dry_run) UnblockStopSignals();
  auto config = LoadSweepConfig(cli.positional()[0], cli.overrides(), multirun);
  if (!config.ok()) {
    PrintError("hpo sweep", config.status());
    return kExitUsage;
  }
  for (const std::string& note : config->notes) std::cerr << "note     " << note << "\n";
  if (!journal.empty()) config->journal = journal;
  for (absl::Status bad : {CheckJournalPath(config->journal), CheckSweepTrainerFiles(*config),
                           CheckPlanSize(*config)}) {
    if (!bad.ok()) {
      PrintError("hpo sweep", bad);
      return kExitUsage;
    }
  }
  if (!dry_run) {
    absl::Status bad = CheckJournalWritable(config->journal);
    if (bad.ok()) bad = ReadJournalToResume(*config, resume).status();
    if (bad.ok() && head.empty()) {
      const LocalHost host = ThisHost();
      bad = CheckDevModeRanks(*config, host.gpus, host.cpus, slots);
      if (bad.ok()) bad = CheckDevModeBatchSizes(*config, host);
    }
    if (!bad.ok()) {
      PrintError("hpo sweep", bad);
      return kExitUsage;
    }
  }
  if (dry_run) {
    std::cout << DescribeSweepPlan(*config);
    return kExitOk;
  }
  const std::string run_dir =
      config->journal.rfind('/') == std::string::npos ? "." : config->journal.substr(0, config->journal.rfind('/'));
  std::unique_ptr<DevCluster> cluster;
  SweepDriver::Options options;
  options.head = head;
  options.keys_dir = keys;
  options.head_grace = absl::Seconds(head_grace_s);
  options.resume = resume;
  options.report_json = report_json;
  options.live = ::isatty(STDOUT_FILENO) != 0;
  if (options.live) SetMinLogLevel(LogLevel::kWARNING);  // keep the live table readable
  std::cout << "sweep " << config->name << ": " << config->method << ", up to "
            << MaxPlannedTrials(*config) << " trials, " << config->max_concurrent_trials
            << " at a time, pruner " << config->pruner->type() << "; journal " << config->journal << std::endl;
  if (head.empty()) {
    DevCluster::Options dev;
    dev.slots = slots > 0 ? slots : config->max_concurrent_trials * config->gpus_per_trial;
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
    std::cout << "dev mode: local head and agent (" << dev.slots << " slot(s)); logs in " << dev.log_dir
              << std::endl;
  }
  SweepDriver driver(*config, options, g_signals);
  absl::Status result = driver.Run();
  if (cluster) cluster->Stop();
  std::cout << driver.Summary();
  if (const std::string html = ReportPathFor(config->journal); ::access(html.c_str(), R_OK) == 0) {
    std::cout << "report: " << html << "\n";
  }
  if (absl::IsCancelled(result)) {
    std::cout << "interrupted; continue with: " << ResumeCommand(cli, multirun, journal, head, keys) << "\n";
    return 130;
  }
  if (!result.ok()) {
    PrintError("hpo sweep", result);
    return absl::IsInvalidArgument(result) ? kExitUsage : kExitFailure;  // e.g. a cluster too small
  }
  if (std::optional<std::string> failed = SweepFailure(driver.Outcome(), max_failed_share)) {
    std::cout << "the sweep failed: " << *failed << " (exit code " << kExitSweepFailed << ")\n";
    return kExitSweepFailed;
  }
  return kExitOk;
}

// The journal named by --journal, or by the sweep file's `journal`.
absl::StatusOr<JournalContents> OpenJournalArg(const std::string& journal, const std::vector<std::string>& positional) {
  std::string path = journal;
  if (path.empty() && !positional.empty()) {
    auto config = LoadSweepConfig(positional[0]);
    if (!config.ok()) return config.status();
    path = config->journal;
  }
  if (path.empty()) return absl::InvalidArgumentError("name a journal: --journal PATH or a sweep file");
  return ReadJournal(path);
}

// The search space as recorded: the distributions the trials carry (the batch-size choices as
// they were at the latest trial).
int Status(const std::vector<std::string>& args) {
  std::string journal, format = "table";
  CommandLine cli("hpo status", "[SWEEP.yaml]",
                  "Shows the trials of a sweep from its journal: state, parameters, progress.");
  cli.AddString("journal", &journal, "journal file (default: the sweep's `journal`)", "PATH");
  cli.AddString("format", &format, "table or json (hpo's view, as tests compare with Optuna)", "FMT");
  cli.ExpectPositional(0, 1);
  if (int rc = ParseOrExit(cli, args, "hpo status"); rc >= 0) return rc;
  if (format != "table" && format != "json") {
    PrintError("hpo status", absl::InvalidArgumentError("--format must be table or json"));
    return kExitUsage;
  }
  auto contents = OpenJournalArg(journal, cli.positional());
  if (!contents.ok()) {
    PrintError("hpo status", contents.status());
    return kExitUsage;
  }
  if (format == "json") {
    std::cout << JournalToJson(*contents);
    return kExitOk;
  }
  if (contents->study_name.empty()) {
    PrintError("hpo status", absl::InvalidArgumentError(absl::StrCat(
                                 journal.empty() ? std::string("the journal") : ClipPath(journal),
                                 ": the journal holds no study yet")));
    return kExitUsage;
  }
  SweepConfig shape;
  shape.name = contents->study_name;
  shape.maximize = contents->maximize;
  shape.metric_name = "value";
  if (auto metric = contents->study_user_attrs.find("metric"); metric != contents->study_user_attrs.end()) {
    auto name = nlohmann::json::parse(metric->second, nullptr, /*allow_exceptions=*/false);
    if (name.is_string()) shape.metric_name = name.get<std::string>();
  }
  ProgressTable table(shape);
  SweepProgress progress;
  int64_t points = 0;
  for (const Trial& t : contents->study.trials) points = std::max(points, t.point + 1);
  progress.planned = points;
  progress.planned_exact = true;
  // Journal fields (parameter names, placements, reasons) may hold terminal escapes.
  std::cout << Printable(table.Render(contents->study, progress, 1 << 20));
  if (const Trial* best = ProgressTable::Best(contents->study)) {
    std::cout << Printable(absl::StrFormat("best trial #%d: %s=%.6g\n", best->number,
                                           shape.metric_name, *best->value));
  }
  return kExitOk;
}

int Best(const std::vector<std::string>& args) {
  std::string journal;
  CommandLine cli("hpo best", "", "Prints the best completed trial of the sweep in a journal.");
  cli.AddString("journal", &journal, "journal file (required)", "PATH");
  if (int rc = ParseOrExit(cli, args, "hpo best"); rc >= 0) return rc;
  if (journal.empty()) {
    PrintError("hpo best", absl::InvalidArgumentError("--journal is required"));
    return kExitUsage;
  }
  auto contents = ReadJournal(journal);
  if (!contents.ok()) {
    PrintError("hpo best", contents.status());
    return kExitUsage;
  }
  const Trial* best = ProgressTable::Best(contents->study);
  if (best == nullptr) {
    int64_t completed = 0;
    for (const Trial& t : contents->study.trials) completed += t.state == TrialState::kComplete;
    PrintError("hpo best", absl::NotFoundError(
                               completed == 0
                                   ? absl::StrCat(ClipPath(journal), ": no trial has completed")
                                   : absl::StrCat(ClipPath(journal), ": ", completed,
                                                  " trial(s) completed, all with a NaN value")));
    return kExitFailure;
  }
  std::string others;
  const SearchSpace* space = static_cast<size_t>(best->number) < contents->distributions.size()
                                 ? &contents->distributions[static_cast<size_t>(best->number)]
                                 : nullptr;
  for (const auto& [name, value] : best->params) {
    if (name == kLrParam || name == kBatchParam) continue;
    auto d = space != nullptr ? space->find(name) : SearchSpace::const_iterator();
    absl::StrAppend(&others, "  ", name, " ",
                    space != nullptr && d != space->end() ? d->second.ValueText(value)
                                                          : absl::StrFormat("%.9g", value));
  }
  std::cout << Printable(absl::StrFormat(
      "trial %d  value %.9g  lr %.9g  batch_size %d  lr_effective %.9g%s\n", best->number,
      *best->value, best->params.at(kLrParam), static_cast<int>(best->params.at(kBatchParam)),
      best->lr_effective, others));
  // Re-running it alone: the resolved config its trainer wrote (trainer/train/resolved_config.h).
  const std::string trial_dir = absl::StrCat(RunDir(journal), "/trial-", best->number);
  const std::string resolved = trial_dir + "/.tunefleet/config.yaml";
  if (::access(resolved.c_str(), R_OK) == 0) {
    const absl::StatusOr<std::string> trainer = FindSiblingBinary("trainer/trainer");
    std::cout << "re-run: " << (trainer.ok() ? *trainer : std::string("trainer"))
              << " train --config " << resolved << " output.dir=" << trial_dir << "-rerun\n";
  } else {
    std::cout << "re-run: no " << resolved << " here (a synthetic trial has none; a trial whose "
              << "output stayed on its node has it there: resources.fetch_back brings it back)\n";
  }
  if (auto bounds = contents->study_user_attrs.find("best_at_bound");
      bounds != contents->study_user_attrs.end()) {
    auto at = nlohmann::json::parse(bounds->second, nullptr, /*allow_exceptions=*/false);
    if (at.is_object()) {
      for (const auto& [name, side] : at.items()) {
        if (side.is_string()) {
          std::cout << "best " << name << " at the " << side.get<std::string>()
                    << " bound of its range: widen parameters." << name << "\n";
        }
      }
    }
  }
  return kExitOk;
}

int Report(const std::vector<std::string>& args) {
  std::string journal, output;
  CommandLine cli("hpo report", "[SWEEP.yaml]",
                  "Writes one self-contained HTML page describing a sweep from its journal:\n"
                  "summary and best trial, the metric against lr per batch size, learning curves,\n"
                  "a timeline per agent:slot, GPU telemetry, the other parameters, all trials.\n"
                  "It references nothing outside itself, so it opens anywhere (scp it to a laptop).\n"
                  "`hpo sweep` keeps one beside its journal up to date.");
  cli.AddString("journal", &journal, "journal file (default: the sweep's `journal`)", "PATH");
  cli.AddString("output", &output, "where to write the page (default: the journal's path with .html)",
                "FILE.html");
  cli.ExpectPositional(0, 1);
  if (int rc = ParseOrExit(cli, args, "hpo report"); rc >= 0) return rc;
  if (journal.empty() && !cli.positional().empty()) {
    auto config = LoadSweepConfig(cli.positional()[0]);
    if (!config.ok()) {
      PrintError("hpo report", config.status());
      return kExitUsage;
    }
    journal = config->journal;
  }
  if (journal.empty()) {
    PrintError("hpo report", absl::InvalidArgumentError("name a journal: --journal PATH or a sweep file"));
    return kExitUsage;
  }
  if (output.empty()) output = ReportPathFor(journal);
  int64_t trials = 0;
  if (absl::Status written = WriteHtmlReport(journal, output, &trials); !written.ok()) {
    PrintError("hpo report", written);
    return absl::IsNotFound(written) || absl::IsPermissionDenied(written) ||
                   absl::IsInvalidArgument(written) || absl::IsFailedPrecondition(written)
               ? kExitUsage
               : kExitFailure;
  }
  std::cout << "report: " << output << " (" << trials << " trials)\n";
  return kExitOk;
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet

int main(int argc, char** argv) {
  // Every line reaches a pipe or a file as it is printed (trial lines, start lines, warnings),
  // not when a block buffer fills; std::cout writes through stdout (synced with stdio).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  tunefleet::SignalFd signals({SIGINT, SIGTERM, SIGHUP});
  tunefleet::hpo::g_signals = &signals;
  tunefleet::InitBinary("hpo");
  return tunefleet::RunSubcommands(
      "hpo",
      "tunefleet's hyperparameter search: random-then-grid over learning rate and batch size,\n"
      "linear LR scaling, early stopping, an Optuna-format journal.",
      {{"sweep", "run a sweep (or --dry_run: print its plan)", tunefleet::hpo::Sweep},
       {"status", "show a sweep's trials from its journal", tunefleet::hpo::Status},
       {"best", "print the best trial in a journal", tunefleet::hpo::Best},
       {"report", "write a sweep's self-contained HTML report", tunefleet::hpo::Report}},
      argc, argv);
}
