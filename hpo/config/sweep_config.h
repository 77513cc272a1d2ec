// The sweep YAML contract (docs/CONFIG.md, "The sweep YAML"; this header is its reference), loaded
// into a typed struct and validated in one place. Every error names the file, the line and the
// dotted key.
//
// The search space (hpo/config/sweep_parameters.h): `lr` (the base learning rate: log_uniform or
// uniform over [min, max], or a list of values), `batch_size` (per-rank batch, a list of
// values), and any other trainer key, written as its dotted name (`train.weight_decay`,
// `model.dropout`) or, when unambiguous, its last part (`weight_decay`), with the
// distributions log_uniform, uniform, int or values. Each trial runs with
// lr_effective = lr * batch_size * ranks * grad_accum / base_batch under
// `lr_scaling: {rule: linear}` (hpo/lr_scaling.h).
//
// The resource axis: under a sweep a trial evaluates `trainer.evals_per_epoch` times an epoch
// (and at its end), whatever its batch size, and reports each evaluation keyed by the samples
// it has seen across all ranks (trainer/train/train_loop.h), which is Optuna's `step` in the
// journal and in every pruner setting (n_warmup_steps, interval_steps, min_resource, max_resource).
//
// W&B sweep spellings are accepted too: `method` at the top level (for search.method), the
// distributions `log_uniform_values` (our log_uniform), `int_uniform` (int) and `categorical`,
// and hyperband's `min_iter`, `max_iter`, `eta` and `s` (hpo/pruners/hyperband_pruner.h). W&B
// counts iterations as the times the
// metric was logged; here that is an evaluation interval (samples_per_epoch / evals_per_epoch
// samples; the synthetic trainer's samples_per_step), so min_iter: N is min_resource: N
// intervals in samples, max_iter likewise max_resource, eta is reduction_factor, and s with
// max_iter (no min_iter) gives min_iter = floor(max_iter / eta^s), W&B's rule for its brackets.
// A W&B key and ours for the same setting (min_iter and min_resource) is an error naming both;
// `strict` is refused (not supported).
//
// Command-line overrides (common/yaml_config.h) win: an override of early_terminate.type drops
// the file's keys of the other types, and one of `method` or `search.method` when the file
// gives the other spelling ignores the file's; each says so in a note (SweepConfig::notes).
// With --multirun, hpo/config/multirun.h.
#ifndef TUNEFLEET_HPO_CONFIG_SWEEP_CONFIG_H_
#define TUNEFLEET_HPO_CONFIG_SWEEP_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "hpo/config/program_config.h"
#include "hpo/config/sweep_parameters.h"
#include "hpo/config/trainer_query.h"
#include "hpo/pruners/nop_pruner.h"
#include "hpo/pruners/pruner_kind.h"
#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

// The synthetic trainer (trainer/data/synthetic.h): a deterministic function of
// (lr_effective, batch_size, step) plus seeded noise, for testing the machinery.
struct SyntheticSpec {
  int64_t steps = 20;
  int64_t samples_per_step = 64;  // each step's place on the samples axis
  double seconds_per_step = 0.0;
  double noise = 0.0;
  int64_t seed = 0;
  // For trials that share a GPU (tests without GPUs): the memory each trial declares
  // (TrialSpec.memory_mib), and whether a trial that starts beside another on its GPU runs out
  // of memory (exit code 3).
  double memory_mib = 0;
  bool oom_when_shared = false;
};

struct TrainerSpec {
  bool synthetic = false;
  SyntheticSpec synthetic_spec;
  // trainer.program: a program of the user's own (hpo/config/program_config.h); its
  // parameters are its own names, and no trainer is asked anything.
  bool program = false;
  ProgramSpec program_spec;
  // tunefleet's trainer with a config (neither synthetic nor a program).
  bool native() const { return !synthetic && !program; }
  std::string config;                  // trainer YAML path (when not synthetic)
  std::vector<std::string> overrides;  // "key=value", applied to that config in file order
  // Evaluations per epoch under the sweep (train.eval_every_epochs = 1 / evals_per_epoch).
  int64_t evals_per_epoch = 8;
  // From the trainer's dry run on its config (with its overrides), when LoadSweepConfig asks it
  // (hpo/config/trainer_query.h):
  int64_t grad_accum = 1;  // for lr scaling
  // Every trainer key with its resolved value (TrainerAnswer::keys).
  std::map<std::string, std::string> keys;
  // The files hpo checks, the model folder's check and the memory estimate per batch size
  // (TrainerAnswer::preflight).
  TrainerPreflight preflight;
  // The samples of one epoch across the ranks (the training examples, padded to a multiple of
  // gpus_per_trial as DistributedSampler pads them), as the trainer counts them; 0 when the
  // training data could not be read here. The synthetic trainer's "epoch" is its steps *
  // samples_per_step.
  int64_t samples_per_epoch = 0;
};

struct LrScalingSpec {
  std::string rule = "linear";  // linear | none
  int64_t base_batch = 32;
};

// The search settings (lr, batch_sizes, params, maximize, method, each sampler module's own
// settings of `search`, max_failures_per_trial) are its SearchSettings part
// (hpo/samplers/search_settings.h).
struct SweepConfig : SearchSettings {
  std::string source;  // the file it came from
  std::string name;
  std::string metric_name;
  TrainerSpec trainer;
  int64_t gpus_per_trial = 1;  // ranks per trial
  // resources.trials_per_gpu (or gpus_per_trial: 1/N): one-rank trials an agent may place on one
  // GPU while their memory estimates fit (TrialSpec.trials_per_gpu); 1: a GPU each.
  int64_t trials_per_gpu = 1;
  // Files and folders the trials need, staged to agents that share no file system with hpo
  // (absolute; relative ones are taken from the sweep file's folder).
  std::vector<std::string> stage;
  // Copy each trial's output folder back from rank 0's node when it ends (TrialSpec.fetch_back).
  bool fetch_back = false;
  // resources.env: variables every trainer rank gets (TrialSpec.env). Agents pass the
  // names of common/trial_env.h, and others only when started with --allow_env NAME (dev
  // mode's agent is); never one that loads code or steers the agent (refused here).
  std::map<std::string, std::string> env;
  // resources.reuse_workers: run each trial's ranks in their slots' warm trainer workers (one
  // long-lived `trainer worker` process per slot, so that a trial skips process start and
  // LibTorch init, and a repeated multi-rank trial its process group's set-up;
  // TrialSpec.reuse_worker); false starts a fresh trainer per rank and trial.
  bool reuse_workers = true;
  // resources.worker_max_trials: a warm worker is recycled after this many trials
  // (TrialSpec.worker_max_trials), bounding what one process can leak or fragment.
  int64_t worker_max_trials = 16;
  LrScalingSpec lr_scaling;
  // early_terminate: the pruner's settings as its module parsed them (never null; type()
  // names it). LoadSweepConfig resolves them against the resource axis (PrunerSettings::
  // Resolve); ParseSweepConfig does not. The types and their keys: hpo/pruners/all_pruners.h.
  PrunerSettingsPtr pruner = NoPruning();
  // max_concurrent_trials is SearchSettings' (the climb fills that many seats).
  std::string journal;  // default runs/NAME/journal.log
  // What the command line changed beyond its own values, one line each for hpo to print
  // ("early_terminate.type=none (override): dropped n_startup_trials from lr.yaml").
  std::vector<std::string> notes;

  // The spec of the searched parameter `name` (lr or a trainer key; not batch_size); null if
  // none.
  const ParamSpec* FindParam(const std::string& name) const;
};

// Loads `path` and applies `overrides` ("search.random.trials=4"; with `multirun`, as
// hpo/config/multirun.h says; without, an error about an override holding a comma suggests
// --multirun). A trainer config named by the sweep (relative to the working directory, else to
// the sweep file's folder) is validated too, by the trainer (`ask_trainer`; empty: the trainer
// binary beside hpo, TrainerBinary()), once, with the searched values, so that a bad trainer
// config fails before any trial starts.
absl::StatusOr<SweepConfig> LoadSweepConfig(const std::string& path,
                                            const std::vector<std::string>& overrides = {},
                                            bool multirun = false,
                                            const AskTrainer& ask_trainer = {});
// LoadSweepConfig in two halves, for a caller with work to start between them (dev mode starts
// its cluster while the trainer answers): the sweep file with its overrides, parsed
// (ReadSweepFile; the trainer asked only for its keys, when a parameter names one, the pruner
// not resolved), then the trainer's part
// (AskTrainerFor: the dry run, the pruner resolved against its epoch, resources.stage found).
absl::StatusOr<SweepConfig> ReadSweepFile(const std::string& path,
                                          const std::vector<std::string>& overrides = {},
                                          bool multirun = false,
                                          const AskTrainer& ask_trainer = {});
absl::Status AskTrainerFor(SweepConfig& config, const std::string& path,
                           const AskTrainer& ask_trainer = {});
// Parses an already loaded file; the trainer config is not opened, and without `trainer_keys`
// the parameters keep their names as written (trainer keys are resolved against the keys the
// trainer lists, hpo/config/sweep_parameters.h).
absl::StatusOr<SweepConfig> ParseSweepConfig(const ConfigFile& file,
                                             const TrainerKeys& trainer_keys = {});

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_SWEEP_CONFIG_H_
