#include "trainer/io/host_snapshot.h"

#include <torch/cuda.h>

#include <set>

namespace tunefleet {
namespace trainer {

HostSnapshot::Tensors HostSnapshot::Copy(const Tensors& tensors) {
  Tensors out;
  std::set<int64_t> devices;  // GPUs copied from without waiting
  for (const auto& [name, source] : tensors) {
    const torch::Tensor t = source.detach();
    torch::Tensor& buffer = buffers_[name];
    if (!buffer.defined() || buffer.sizes() != t.sizes() || buffer.dtype() != t.dtype()) {
      buffer = torch::empty(t.sizes(),
                            torch::TensorOptions().dtype(t.dtype()).pinned_memory(t.is_cuda()));
    }
    if (t.is_cuda() && buffer.is_pinned()) {
      buffer.copy_(t, /*non_blocking=*/true);
      devices.insert(t.device().index());
    } else {
      buffer.copy_(t);
    }
    out[name] = buffer;
  }
  // The copies were queued on each device's current stream: the whole device is waited for.
  for (const int64_t d : devices) torch::cuda::synchronize(d);
  return out;
}

int64_t HostSnapshot::bytes() const {
  int64_t n = 0;
  for (const auto& [name, b] : buffers_) n += static_cast<int64_t>(b.nbytes());
  return n;
}

int64_t HostSnapshot::pinned_bytes() const {
  int64_t n = 0;
  for (const auto& [name, b] : buffers_) n += b.is_pinned() ? static_cast<int64_t>(b.nbytes()) : 0;
  return n;
}

}  // namespace trainer
}  // namespace tunefleet
