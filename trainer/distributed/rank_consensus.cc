#include "trainer/distributed/rank_consensus.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "common/logging.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace trainer {

RankConsensus::RankConsensus(comm::ProcessGroup* group, AgentClient* client,
                             const torch::Device& device)
    : group_(group),
      client_(group == nullptr || group->rank() == 0 ? client : nullptr),
      device_(device) {}

absl::StatusOr<double> RankConsensus::Mean(const torch::Tensor& value) {
  if (group_ == nullptr) return value.item<double>();
  torch::Tensor t = value.detach().to(torch::kDouble).reshape({1});
  if (group_->backend() == comm::ProcessGroup::Backend::kGloo) t = t.to(torch::kCPU);
  RETURN_IF_ERROR(group_->AllReduceSum(t));
  return t.item<double>() / static_cast<double>(group_->size());
}

absl::StatusOr<bool> RankConsensus::RankZeroDecides(bool decision) {
  if (group_ == nullptr) return decision;
  torch::Tensor flag = torch::full({1}, decision ? 1.0 : 0.0, torch::kFloat);
  if (group_->backend() == comm::ProcessGroup::Backend::kNccl) flag = flag.to(device_);
  RETURN_IF_ERROR(group_->Broadcast(flag, 0));
  return flag.item<double>() > 0.5;
}

absl::StatusOr<bool> RankConsensus::ReportPoint(int64_t step, int64_t key, bool last,
                                                const std::map<std::string, double>& values) {
  if (last) {
    if (client_ != nullptr) RETURN_IF_ERROR(client_->ReportFinal(step, key, values));
    return false;
  }
  bool stop = false;
  if (client_ != nullptr) {
    ASSIGN_OR_RETURN(stop, client_->Report(step, key, values));
  }
  ASSIGN_OR_RETURN(stop, RankZeroDecides(stop));
  if (stop) TF_LOG(INFO) << "stopped at step " << step << " (" << key << " samples) by the pruner";
  return stop;
}

std::unique_ptr<ProgressWatchdog> MakePeerWatchdog(int rank, int64_t ddp_timeout_s) {
  const auto timeout = std::chrono::milliseconds(ddp_timeout_s * 1000);
  const auto limit = std::max(std::chrono::milliseconds(500),
                              timeout - std::max(std::chrono::milliseconds(1000), timeout / 10));
  return std::make_unique<ProgressWatchdog>(
      limit, [rank, ddp_timeout_s](std::chrono::milliseconds idle) {
        std::fprintf(stderr,
                     "trainer train: error: rank %d: no progress for %.1f s "
                     "(train.ddp_timeout_s %lld): a peer rank stalled or exited\n",
                     rank, static_cast<double>(idle.count()) / 1000.0,
                     static_cast<long long>(ddp_timeout_s));
        std::fflush(stderr);
        std::_Exit(1);
      });
}

}  // namespace trainer
}  // namespace tunefleet
