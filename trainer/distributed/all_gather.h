// A differentiable all-gather, as torch.distributed.nn.functional.all_gather: forward
// concatenates every rank's x ([B, ...], the same shape on every rank) in rank order; backward
// sums the incoming gradient over ranks and returns this rank's slice. With it a loss over the
// gathered tensor gets, on every rank, the gradient of the sum of all ranks' losses with respect
// to its own rows (MultipleNegativesRankingLoss with every rank's positives as negatives).
// Collective: every rank must call it at the same point. A failed collective throws c10::Error.
// Thread-safety: as comm::ProcessGroup.
#ifndef TUNEFLEET_TRAINER_DISTRIBUTED_ALL_GATHER_H_
#define TUNEFLEET_TRAINER_DISTRIBUTED_ALL_GATHER_H_

#include <torch/types.h>

#include "comm/process_group.h"

namespace tunefleet {
namespace trainer {

torch::Tensor AllGatherWithGrad(comm::ProcessGroup* group, const torch::Tensor& x);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DISTRIBUTED_ALL_GATHER_H_
