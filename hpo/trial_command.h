// The trainer command of a trial, in its TrialSpec: what the agent runs for every rank. The
// trainer gets lr_effective (the base lr scaled by the global batch), never the base lr.
//   synthetic:  argv synthetic --steps N --samples_per_step M --seconds_per_step S --noise X
//               --seed K --lr_effective LR --batch_size B --metric NAME
//   program:    its own argv, templates filled in (hpo/program_command.h)
//   config:     argv train --config /abs/path.yaml, and typed overrides (TrialSpec.overrides,
//               comm/trainer_overrides.h), in order: the sweep's trainer.overrides,
//               train.eval_every_steps=0 train.eval_every_samples=0
//               train.eval_every_epochs=1/EVALS_PER_EPOCH, each searched trainer key (a double,
//               an int for `int` and whole categorical numbers, a string for a categorical's
//               label), train.lr=LR, train.batch_size=B, output.dir=RUN_DIR/trial-N
#ifndef TUNEFLEET_HPO_TRIAL_COMMAND_H_
#define TUNEFLEET_HPO_TRIAL_COMMAND_H_

#include <string>
#include <vector>

#include "comm/proto/messages.pb.h"
#include "hpo/config/sweep_config.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// Sets spec's argv and overrides (a program's: hpo/program_command.h). `run_dir`: where the
// sweep keeps its files (the journal's folder), absolute.
void FillTrainerCommand(const SweepConfig& config, const Trial& trial, const std::string& run_dir,
                        comm::TrialSpec* spec);

// The whole TrialSpec hpo submits for `trial`: its number, sweep and ranks, the command
// (FillTrainerCommand), logs in RUN_DIR/logs, staged paths, params_json (TrialHParamsJson),
// resources.env, warm workers, GPU sharing with `memory_mib` (the trial's estimate, MiB) and
// the output folder to fetch back.
void FillTrialSpec(const SweepConfig& config, const Trial& trial, const std::string& run_dir,
                   double memory_mib, comm::TrialSpec* spec);

// The trial's hyperparameters as a flat JSON object, which the trainer writes into its TensorBoard
// event file for the HParams view (TUNEFLEET_HPARAMS, common/event_file.h): every searched
// parameter by name (a number, or the label of a categorical of strings), and lr_effective.
std::string TrialHParamsJson(const SweepConfig& config, const Trial& trial);

// Shortest text that reads back as the same double.
std::string ExactNumber(double value);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_TRIAL_COMMAND_H_
