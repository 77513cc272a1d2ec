// hpo: runs sweeps (random-then-grid search, linear LR scaling, early stopping) and reads
// their journals.
#include <iostream>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/logging.h"
#include "hpo/sweep_config.h"
#include "hpo/sweep_plan.h"

namespace tunefleet {
namespace hpo {
namespace {

int Sweep(const std::vector<std::string>& args) {
  std::string head, journal;
  bool resume = false, dry_run = false;
  int64_t slots = 0;
  CommandLine cli("hpo sweep", "SWEEP.yaml [key=value ...]",
                  "Runs the sweep described by SWEEP.yaml. Without --head it runs in single-node\n"
                  "dev mode: it starts a head and a local agent, uses every local GPU (or CPU\n"
                  "slots), and stops them when the sweep ends. key=value arguments override the\n"
                  "sweep file (search.random.trials=4).");
  cli.AddString("head", &head, "address of a running head; omit for single-node dev mode",
                "tcp://HOST:PORT");
  cli.AddString("journal", &journal, "journal file (default: the sweep's `journal`)", "PATH");
  cli.AddBool("resume", &resume, "continue the sweep recorded in the journal");
  cli.AddBool("dry_run", &dry_run, "validate the sweep and print its plan; run nothing");
  cli.AddInt("slots", &slots, "dev mode on a machine without GPUs: CPU slots (default: cores)");
  cli.AllowOverrides();
  cli.ExpectPositional(1, 1);
  absl::Status status = cli.Parse(args);
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (!status.ok()) {
    PrintError("hpo sweep", status);
    return kExitUsage;
  }
  auto config = LoadSweepConfig(cli.positional()[0], cli.overrides());
  if (!config.ok()) {
    PrintError("hpo sweep", config.status());
    return kExitUsage;
  }
  if (!journal.empty()) config->journal = journal;
  if (dry_run) {
    std::cout << DescribeSweepPlan(*config);
    return kExitOk;
  }
  PrintError("hpo sweep", absl::UnavailableError(
                              "running sweeps needs the dev-mode driver, which this build lacks; "
                              "use --dry_run"));
  return kExitFailure;
}

int Status(const std::vector<std::string>& args) {
  std::string journal;
  CommandLine cli("hpo status", "[SWEEP.yaml]",
                  "Shows the trials of a sweep from its journal: state, parameters, progress.");
  cli.AddString("journal", &journal, "journal file (default: the sweep's `journal`)", "PATH");
  cli.ExpectPositional(0, 1);
  absl::Status status = cli.Parse(args);
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (!status.ok()) {
    PrintError("hpo status", status);
    return kExitUsage;
  }
  PrintError("hpo status", absl::UnavailableError("journals arrive with the sweep driver"));
  return kExitFailure;
}

int Best(const std::vector<std::string>& args) {
  std::string journal;
  CommandLine cli("hpo best", "", "Prints the best completed trial of the sweep in a journal.");
  cli.AddString("journal", &journal, "journal file (required)", "PATH");
  absl::Status status = cli.Parse(args);
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (status.ok() && journal.empty()) status = absl::InvalidArgumentError("--journal is required");
  if (!status.ok()) {
    PrintError("hpo best", status);
    return kExitUsage;
  }
  PrintError("hpo best", absl::UnavailableError("journals arrive with the sweep driver"));
  return kExitFailure;
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet

int main(int argc, char** argv) {
  tunefleet::ChdirToUserWorkingDirectory();
  tunefleet::SetLogRole("hpo");
  return tunefleet::RunSubcommands(
      "hpo",
      "tunefleet's hyperparameter search: random-then-grid over learning rate and batch size,\n"
      "linear LR scaling, early stopping, an Optuna-format journal.",
      {{"sweep", "run a sweep (or --dry_run: print its plan)", tunefleet::hpo::Sweep},
       {"status", "show a sweep's trials from its journal", tunefleet::hpo::Status},
       {"best", "print the best trial in a journal", tunefleet::hpo::Best}},
      argc, argv);
}
