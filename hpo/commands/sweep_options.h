// `hpo sweep`'s command line: its flags, their help, and their checks, before any file is
// read or anything started. FromFlags parses and checks (hpo/config/sweep_flags.h), printing
// --help or the bad flag's one line itself, so that the command only runs with good options.
//
// Thread-safety: FromFlags writes to stdout/stderr; SweepOptions is plain data.
#ifndef TUNEFLEET_HPO_COMMANDS_SWEEP_OPTIONS_H_
#define TUNEFLEET_HPO_COMMANDS_SWEEP_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/invocation.h"

namespace tunefleet {
namespace hpo {

struct SweepOptions {
  std::string sweep_file;              // SWEEP.yaml
  std::vector<std::string> overrides;  // key=value, in order
  std::string head;                    // empty: single-node dev mode
  std::string journal;                 // empty: the sweep's `journal`
  std::string keys;                    // with --head: CURVE key folder
  std::string report_json;
  bool resume = false;
  bool dry_run = false;
  bool multirun = false;
  int64_t slots = 0;  // dev mode: 0 = max_concurrent_trials x gpus_per_trial
  int64_t head_grace_s = 300;
  double max_failed_share = 0.5;

  // Parses `args` (what follows `hpo sweep`) into *options and checks them. Returns -1 when
  // the sweep should go on; otherwise the exit code to return now: kExitOk after printing
  // --help on stdout, kExitUsage after printing the bad flag's line on stderr.
  static int FromFlags(const std::vector<std::string>& args, SweepOptions* options);

  // The command that continues an interrupted sweep: `hpo` (how the user runs hpo:
  // hpo/invocation.h), sweep, the same file, overrides, journal, head and keys, with --resume;
  // each word as the shell reads it back.
  std::string ResumeCommand(const std::string& hpo = HpoInvocation()) const;
};

// `word` as the shell reads it back: bare when it holds only safe characters, else in single
// quotes.
std::string ShellWord(const std::string& word);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_COMMANDS_SWEEP_OPTIONS_H_
