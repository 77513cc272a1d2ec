// Host copies of named tensors for writes that run while training goes on (trainer/
// background_writer.h): Copy() fills buffers that this object keeps from one call to the next,
// page-locked when the tensors live on a GPU, so that a checkpoint costs one device-to-host copy
// at the link's speed, not a fresh allocation that is faulted in page by page each time.
// The maps Copy() returns share those buffers: they stay valid until the next Copy(), which the
// caller must not start while a write still reads them.
// Thread-safety: thread-compatible.
#ifndef TUNEFLEET_TRAINER_IO_HOST_SNAPSHOT_H_
#define TUNEFLEET_TRAINER_IO_HOST_SNAPSHOT_H_

#include <cstdint>
#include <map>
#include <string>

#include <torch/types.h>

namespace tunefleet {
namespace trainer {

class HostSnapshot {
 public:
  using Tensors = std::map<std::string, torch::Tensor>;

  // Contiguous host copies of `tensors` (any devices, any layout), complete when it returns.
  // A buffer is reallocated only when a tensor's shape or dtype changed.
  Tensors Copy(const Tensors& tensors);

  // Bytes held in buffers, and how many of them are page-locked.
  int64_t bytes() const;
  int64_t pinned_bytes() const;

 private:
  Tensors buffers_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_IO_HOST_SNAPSHOT_H_
