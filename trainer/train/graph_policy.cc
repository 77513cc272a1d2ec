#include "trainer/train/graph_policy.h"

namespace tunefleet {
namespace trainer {

std::string WhyNoCudaGraphs(const TrainConfig& train, bool on_gpu, bool capture_available) {
  const std::string& want = train.cuda_graphs;
  if (!on_gpu) return "not on a GPU";
  if (want == "false") return "train.cuda_graphs: false";
  if (!capture_available) return "this LibTorch cannot capture CUDA graphs";
  if (train.precision == "fp16") {
    return "fp16's loss scaling decides on the host whether a step happens "
           "(bf16 replays CUDA graphs)";
  }
  if (train.grad_checkpointing) {
    return "train.grad_checkpointing re-runs layers under saved random states, "
           "which a CUDA graph cannot replay";
  }
  return "";
}

std::string WhyNoCudaGraphsForTask(const std::string& multi_pass_loss, int64_t negatives,
                                   const std::string& pair_loss) {
  if (!multi_pass_loss.empty())
    return "task.loss " + multi_pass_loss + " runs its own backward passes";
  if (negatives > 0) return "the rows carry hard negatives";
  if (!pair_loss.empty()) return "task.loss " + pair_loss + " builds each batch's pairs";
  return "";
}

}  // namespace trainer
}  // namespace tunefleet
