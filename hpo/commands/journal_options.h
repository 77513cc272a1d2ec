// The command lines of hpo's journal readers, `hpo status`, `hpo best` and `hpo report`: their
// flags, their help and their checks. Each FromFlags parses and checks `args` (what follows the
// subcommand), printing --help or the bad flag's one line itself.
//
// Each returns -1 when the command should go on; otherwise the exit code to return now:
// kExitOk after printing --help on stdout, kExitUsage after printing the bad flag's line on
// stderr.
//
// Thread-safety: FromFlags writes to stdout/stderr; the options are plain data.
#ifndef TUNEFLEET_HPO_COMMANDS_JOURNAL_OPTIONS_H_
#define TUNEFLEET_HPO_COMMANDS_JOURNAL_OPTIONS_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace hpo {

struct StatusOptions {
  std::string journal;           // empty: the sweep file's `journal`
  std::string sweep_file;        // optional
  std::string format = "table";  // table | json
  static int FromFlags(const std::vector<std::string>& args, StatusOptions* options);
};

struct BestOptions {
  std::string journal;  // required
  static int FromFlags(const std::vector<std::string>& args, BestOptions* options);
};

struct ReportOptions {
  std::string journal;     // empty: the sweep file's `journal`
  std::string sweep_file;  // optional
  std::string output;      // empty: the journal's path with .html
  static int FromFlags(const std::vector<std::string>& args, ReportOptions* options);
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_COMMANDS_JOURNAL_OPTIONS_H_
