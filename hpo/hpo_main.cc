// hpo: runs sweeps (random-then-grid search, linear LR scaling, early stopping) and reads
// their journals. Each subcommand is a library in hpo/commands/.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/signals.h"
#include "hpo/commands/best_command.h"
#include "hpo/commands/report_command.h"
#include "hpo/commands/status_command.h"
#include "hpo/commands/sweep_command.h"

int main(int argc, char** argv) {
  // Every line reaches a pipe or a file as it is printed (trial lines, start lines, warnings),
  // not when a block buffer fills; std::cout writes through stdout (synced with stdio).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Made before any thread, so every thread (ZeroMQ's) inherits the blocked mask.
  tunefleet::SignalFd signals({SIGINT, SIGTERM, SIGHUP});
  tunefleet::InitBinary("hpo");
  namespace hpo = tunefleet::hpo;
  return tunefleet::RunSubcommands(
      "hpo",
      "tunefleet's hyperparameter search: random-then-grid over learning rate and batch size,\n"
      "linear LR scaling, early stopping, an Optuna-format journal.",
      {{"sweep", "run a sweep (or --dry_run: print its plan)",
        [&signals](const std::vector<std::string>& args) {
          return hpo::SweepCommand(args, &signals);
        }},
       {"status", "show a sweep's trials from its journal", hpo::StatusCommand},
       {"best", "print the best trial in a journal", hpo::BestCommand},
       {"report", "write a sweep's self-contained HTML report", hpo::ReportCommand}},
      argc, argv);
}
