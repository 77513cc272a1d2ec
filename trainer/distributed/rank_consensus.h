// What the ranks of a data-parallel training run agree on, so that they stay in step:
//   - values every rank holds, averaged (the logged loss of the global batch);
//   - rank 0's decisions where every rank takes part (a checkpoint under zero1 gathers the
//     optimizer state from every rank);
//   - early stopping, which is rank-synchronous: rank 0 reports an evaluation point to the
//     agent and hears the pruner's decision, every rank learns it at that same step (a
//     broadcast), and all leave the loop together;
//   - errors: a peer that stalls or dies leaves this rank blocked in a collective, so a
//     watchdog (trainer/distributed/progress_watchdog.h) ends the process a little before the
//     collectives' own timeout (train.ddp_timeout_s).
// With one process (no group) every call is local and nothing is communicated. All ranks make
// the same calls in the same order (they are collectives).
// Thread-safety: one per training run, used from the training loop's thread.
#ifndef TUNEFLEET_TRAINER_DISTRIBUTED_RANK_CONSENSUS_H_
#define TUNEFLEET_TRAINER_DISTRIBUTED_RANK_CONSENSUS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/distributed/agent_client.h"
#include "trainer/distributed/progress_watchdog.h"

namespace tunefleet {
namespace trainer {

class RankConsensus {
 public:
  // `group`: null for one process. `client`: where rank 0 reports (null: no agent; ignored on
  // the other ranks). `device`: where NCCL's tensors live.
  RankConsensus(comm::ProcessGroup* group, AgentClient* client, const torch::Device& device);

  // The mean over ranks of a scalar every rank holds.
  absl::StatusOr<double> Mean(const torch::Tensor& value);
  // Rank 0's `decision` on every rank (whether to stop, whether to write a checkpoint).
  absl::StatusOr<bool> RankZeroDecides(bool decision);
  // Reports the evaluation point of `step` under `key` (Report.samples) with `values`: the
  // final report when `last` (no decision follows: false), else a report whose stop decision
  // every rank returns.
  absl::StatusOr<bool> ReportPoint(int64_t step, int64_t key, bool last,
                                   const std::map<std::string, double>& values);

 private:
  comm::ProcessGroup* group_;
  AgentClient* client_;  // rank 0's, else null
  torch::Device device_;
};

// The watchdog of a data-parallel rank: it ends the process with one line on stderr when the
// loop has not petted it for train.ddp_timeout_s less a margin (10%, at least 1 s, covering the
// process's exit; at least 500 ms in all), so that the trial fails within that timeout whatever
// the backend does (NCCL's watchdog held a rank a minute past it).
std::unique_ptr<ProgressWatchdog> MakePeerWatchdog(int rank, int64_t ddp_timeout_s);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DISTRIBUTED_RANK_CONSENSUS_H_
