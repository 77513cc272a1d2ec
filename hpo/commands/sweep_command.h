// `hpo sweep`: checks the sweep (its file, the trainer's files, the plan's size, the journal,
// dev mode's host), then prints the plan (--dry_run) or runs it: against --head, or in
// single-node dev mode on a local head and agent (hpo/dev_cluster.h) that it stops at the end.
// Exit codes: SweepOptions' --help (hpo/commands/sweep_options.cc).
//
// Thread-safety: runs on the main thread; `signals` (SIGINT, SIGTERM, SIGHUP, blocked in every
// thread by main()) is the sweep's stop request.
#ifndef TUNEFLEET_HPO_COMMANDS_SWEEP_COMMAND_H_
#define TUNEFLEET_HPO_COMMANDS_SWEEP_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/signals.h"
#include "hpo/commands/sweep_options.h"
#include "hpo/config/sweep_config.h"
#include "hpo/config/sweep_preflight.h"

namespace tunefleet {
namespace hpo {

// Dev mode's local agent's slots, as hpo says them at the start: on a host with GPUs "4 slot(s)"
// (", up to 4 trials a GPU" where trials share GPUs); without, the CPU slots the agent runs and
// the host's cores: "4 CPU slot(s) on 2 core(s), 1 trial a slot" (1 rank a slot for a trial of
// several ranks).
std::string DevModeSlots(int64_t slots, const LocalHost& host, const SweepConfig& config);

// Runs the sweep `options` describe (checked by SweepOptions::FromFlags); returns the exit code.
int RunSweep(const SweepOptions& options, SignalFd* signals);
// FromFlags, then RunSweep.
int SweepCommand(const std::vector<std::string>& args, SignalFd* signals);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_COMMANDS_SWEEP_COMMAND_H_
