#include "hpo/commands/journal_options.h"

#include "absl/status/status.h"
#include "common/cli.h"

namespace tunefleet {
namespace hpo {

int StatusOptions::FromFlags(const std::vector<std::string>& args, StatusOptions* o) {
  CommandLine cli("hpo status", "[SWEEP.yaml]",
                  "Shows the trials of a sweep from its journal: state, parameters, progress.");
  cli.AddString("journal", &o->journal, "journal file (default: the sweep's `journal`)", "PATH");
  cli.AddString("format", &o->format, "table or json (hpo's view, as tests compare with Optuna)",
                "FMT");
  cli.ExpectPositional(0, 1);
  if (int rc = ParseOrExit(cli, args, "hpo status"); rc >= 0) return rc;
  if (o->format != "table" && o->format != "json") {
    PrintError("hpo status", absl::InvalidArgumentError("--format must be table or json"));
    return kExitUsage;
  }
  if (!cli.positional().empty()) o->sweep_file = cli.positional()[0];
  return -1;
}

int BestOptions::FromFlags(const std::vector<std::string>& args, BestOptions* o) {
  CommandLine cli("hpo best", "", "Prints the best completed trial of the sweep in a journal.");
  cli.AddString("journal", &o->journal, "journal file (required)", "PATH");
  if (int rc = ParseOrExit(cli, args, "hpo best"); rc >= 0) return rc;
  if (o->journal.empty()) {
    PrintError("hpo best", absl::InvalidArgumentError("--journal is required"));
    return kExitUsage;
  }
  return -1;
}

int ReportOptions::FromFlags(const std::vector<std::string>& args, ReportOptions* o) {
  CommandLine cli(
      "hpo report", "[SWEEP.yaml]",
      "Writes one self-contained HTML page describing a sweep from its journal:\n"
      "summary and best trial, the metric against lr per batch size, learning curves,\n"
      "a timeline per agent:slot, GPU telemetry, the other parameters, all trials.\n"
      "It references nothing outside itself, so it opens anywhere (scp it to a laptop).\n"
      "`hpo sweep` keeps one beside its journal up to date.");
  cli.AddString("journal", &o->journal, "journal file (default: the sweep's `journal`)", "PATH");
  cli.AddString("output", &o->output,
                "where to write the page (default: the journal's path with .html)", "FILE.html");
  cli.ExpectPositional(0, 1);
  if (int rc = ParseOrExit(cli, args, "hpo report"); rc >= 0) return rc;
  if (!cli.positional().empty()) o->sweep_file = cli.positional()[0];
  return -1;
}

}  // namespace hpo
}  // namespace tunefleet
