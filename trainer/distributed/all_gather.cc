#include "trainer/distributed/all_gather.h"

#include <string>

#include <torch/autograd.h>

namespace tunefleet {
namespace trainer {
namespace {

struct GatherFunction : public torch::autograd::Function<GatherFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x,
                               int64_t group) {
    auto* g = reinterpret_cast<comm::ProcessGroup*>(group);
    ctx->saved_data["group"] = group;
    ctx->saved_data["rows"] = x.size(0);
    absl::StatusOr<torch::Tensor> all = g->AllGather(x.contiguous());
    TORCH_CHECK(all.ok(), std::string(all.status().message()));
    return *all;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* g = reinterpret_cast<comm::ProcessGroup*>(ctx->saved_data["group"].toInt());
    const int64_t rows = ctx->saved_data["rows"].toInt();
    torch::Tensor sum = grads[0].contiguous().clone();
    const absl::Status s = g->AllReduceSum(sum);
    TORCH_CHECK(s.ok(), std::string(s.message()));
    return {sum.narrow(0, g->rank() * rows, rows), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor AllGatherWithGrad(comm::ProcessGroup* group, const torch::Tensor& x) {
  return GatherFunction::apply(x, reinterpret_cast<int64_t>(group));
}

}  // namespace trainer
}  // namespace tunefleet
