// `trainer.program` in a sweep YAML: a training program of the user's own, run as each trial
// (docs/CONFIG.md, "trainer.program"):
//
//   trainer:
//     program: [python3, train.py, --lr, "{lr}", --batch-size, "{batch_size}", --out,
//     "{trial_dir}"] env: {WANDB_MODE: disabled, RUN_NAME: "trial-{trial}"}   # templated the same
//     way workdir: .            # where the ranks start; default: the sweep file's folder launch:
//     per_rank      # one process per rank (torchrun's environment), or `once` a node kill_grace_s:
//     10      # SIGTERM on a stop, SIGKILL this much later gpu_memory_mib: 6000  # its peak GPU
//     memory, for resources.trials_per_gpu > 1
//
// Templates (common/arg_template.h): {NAME} is the trial's value of parameter NAME, {lr} the lr
// it trains with (lr_effective), {lr_base} the sampled lr, {lr_effective} the same as {lr},
// {batch_size} the per-rank batch, {trial} the trial number, {trial_dir} its folder; {{ and }}
// are literal braces. A name no trial gives a value for is refused when the sweep loads.
// The program and its arguments come from the sweep file alone (and the command-line overrides
// of it); agents pass trainer.env as resources.env (common/trial_env.h's rules).
// Thread-safety: pure functions.
#ifndef TUNEFLEET_HPO_CONFIG_PROGRAM_CONFIG_H_
#define TUNEFLEET_HPO_CONFIG_PROGRAM_CONFIG_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/yaml_config.h"

namespace tunefleet {
namespace hpo {

struct ProgramSpec {
  std::vector<std::string> argv;           // templates; argv[0] is the program
  std::map<std::string, std::string> env;  // NAME -> template
  // Where the ranks start: as written ("" = the sweep file's folder), absolute once
  // ResolveProgramFolder ran.
  std::string workdir;
  bool launch_once = false;   // launch: once
  double kill_grace_s = 10;   // SIGTERM, then SIGKILL this much later
  double gpu_memory_mib = 0;  // its declared peak GPU memory (0: not declared)
};

// The trainer keys that only a program takes.
const std::vector<std::string>& ProgramKeys();

// Reads program, env, workdir, launch, kill_grace_s and gpu_memory_mib from `trainer` (the
// sweep's trainer section); the templates' names are checked later (CheckProgramTemplates).
absl::Status ParseProgram(const ConfigMap& trainer, ProgramSpec* program);

// The template names a trial gives a value for: its parameters (`params`, lr and batch_size
// among them) and lr_base, lr_effective, trial, trial_dir.
std::vector<std::string> ProgramValueNames(const std::vector<std::string>& params);

// Every template of `program` uses only `known` names: else "FILE:LINE: trainer.program:
// argument 4 ('--lr={lrr}'): {lrr} is not a parameter (a trial gives lr, lr_base, ...)".
absl::Status CheckProgramTemplates(const ConfigMap& trainer, const ProgramSpec& program,
                                   const std::vector<std::string>& known);

// workdir made absolute (relative to `sweep_file`'s folder; "" is that folder) and checked to be
// a folder: "lr.yaml: trainer.workdir: /x/y: no such folder".
absl::Status ResolveProgramFolder(ProgramSpec& program, const std::string& sweep_file);

// The program (argv[0], unless it is a template) found as an agent on this host would find it
// (common/child_process.h FindProgram, with this process's PATH, from the workdir): else
// "lr.yaml: trainer.program: python4: not found on PATH (/usr/bin:/bin)". Dev mode checks it;
// with --head the agents may run elsewhere.
absl::Status CheckProgramHere(const ProgramSpec& program, const std::string& sweep_file);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_PROGRAM_CONFIG_H_
