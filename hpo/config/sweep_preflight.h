// What `hpo sweep` checks before it starts a journal or a trial (dev mode's head and agent start
// during the trainer's check and stop again on a failure): each failure is a usage error (exit
// 2) in one line, naming the file and the key or flag.
//   - the plan: at most kMaxPlannedTrials trials (search.random.trials, search.grid.lr_points);
//   - the ranks of a trial (resources.gpus_per_trial) in dev mode: at most the GPUs here, or
//     without GPUs the CPU cores here (or dev mode's --slots when given);
//   - the batch sizes in dev mode: none the memory estimate says cannot fit this host;
//   - the journal: its folder takes a new file (a probe made and removed with O_EXCL), so that a
//     journal on /proc or a read-only mount is refused before a head or an agent starts;
//   - --resume: the journal is one this sweep may continue (ReadJournalToResume).
// Thread-safety: stateless.
#ifndef TUNEFLEET_HPO_CONFIG_SWEEP_PREFLIGHT_H_
#define TUNEFLEET_HPO_CONFIG_SWEEP_PREFLIGHT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hpo/config/sweep_config.h"
#include "hpo/journal/journal_replay.h"

namespace tunefleet {
namespace hpo {

inline constexpr int64_t kMaxPlannedTrials = 1000000;

// The plan's size: "lr.yaml: search: the plan holds up to 4000000000 trials; the limit is
// 1000000 (lower search.random.trials or search.grid.lr_points)".
absl::Status CheckPlanSize(const SweepConfig& config);

// Dev mode's ranks per trial against this host: `gpus` found here, else `cpus`; `slots` (dev
// mode's --slots, 0 when not given) replaces the CPU count where there is no GPU.
absl::Status CheckDevModeRanks(const SweepConfig& config, int gpus, int cpus, int64_t slots);

// What dev mode runs trials on: this host's GPUs (common/gpu_detect.h), else its CPU cores.
struct LocalHost {
  int gpus = 0;
  int cpus = 1;
  double memory_bytes = 0;  // the smallest GPU's memory, or the RAM without GPUs; 0: unknown
  std::string
      memory_text;  // "the GPU's 79.1 GiB (NVIDIA H100 80GB HBM3)", "this host's 23.5 GiB of RAM"
};
LocalHost ThisHost();
// The CPU cores this process may run on (LocalHost::cpus, without looking for GPUs).
int CpusHere();

// Dev mode's batch sizes against this host: each must fit by the trainer's memory estimate at
// 2 tokens a sequence (a lower bound, which the trainer's dry run gives per batch size:
// TrainerPreflight::memory, hpo/config/trainer_query.h), as the trainer itself checks at its
// start. A synthetic sweep passes, as does a model the trainer could not read here.
absl::Status CheckDevModeBatchSizes(const SweepConfig& config, const LocalHost& host);

// The trainer's estimate of one trial's peak memory at per-rank batch `batch` (MiB; the model
// state, and the activations at the model's max_seq_len, an upper bound under dynamic padding;
// from its dry run, TrainerPreflight::memory), which agents check against a shared GPU's free
// memory (TrialSpec.memory_mib); a synthetic sweep's memory_mib, a program's gpu_memory_mib; 0
// when the model cannot be read here or the trainer estimated no such batch size.
double TrialMemoryMib(const SweepConfig& config, int64_t batch);

// The journal's folder, if it exists, takes a new file.
absl::Status CheckJournalWritable(const std::string& journal);

// The journal to continue: nullopt when there is none yet (missing or empty). Errors (all
// usage errors): a journal that exists without --resume, one that does not decode, holds no
// study, another sweep's, or one made for the other metric goal.
absl::StatusOr<std::optional<JournalContents>> ReadJournalToResume(const SweepConfig& config,
                                                                   bool resume);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_SWEEP_PREFLIGHT_H_
