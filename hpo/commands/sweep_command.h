// `hpo sweep`: checks the sweep (its file, the trainer's files, the plan's size, the journal,
// dev mode's host), then prints the plan (--dry_run) or runs it: against --head, or in
// single-node dev mode on a local head and agent (hpo/dev_cluster.h) that it stops at the end.
// Exit codes: SweepOptions' --help (hpo/commands/sweep_options.cc).
//
// Thread-safety: runs on the main thread; `signals` (SIGINT, SIGTERM, SIGHUP, blocked in every
// thread by main()) is the sweep's stop request.
#ifndef TUNEFLEET_HPO_COMMANDS_SWEEP_COMMAND_H_
#define TUNEFLEET_HPO_COMMANDS_SWEEP_COMMAND_H_

#include <string>
#include <vector>

#include "common/signals.h"
#include "hpo/commands/sweep_options.h"

namespace tunefleet {
namespace hpo {

// Runs the sweep `options` describe (checked by SweepOptions::FromFlags); returns the exit code.
int RunSweep(const SweepOptions& options, SignalFd* signals);
// FromFlags, then RunSweep.
int SweepCommand(const std::vector<std::string>& args, SignalFd* signals);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_COMMANDS_SWEEP_COMMAND_H_
