// Mixed precision as torch.autocast does it: inside an AutocastScope, matmuls and the other
// autocast-listed operations of the given device type run in the lower precision while
// parameters, gradients and optimizer state stay float32. Precision names are the trainer YAML's
// train.precision. The cast cache is off: weights change every step, and a captured CUDA graph
// must not keep host-side references to tensors of its memory pool.
// Thread-safety: autocast state is thread-local; a scope affects only its own thread.
#ifndef TUNEFLEET_TRAINER_MODEL_AUTOCAST_H_
#define TUNEFLEET_TRAINER_MODEL_AUTOCAST_H_

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

enum class Precision { kFp32, kBf16, kFp16 };

// "fp32" | "bf16" | "fp16".
absl::StatusOr<Precision> ParsePrecision(absl::string_view name);
const char* PrecisionName(Precision precision);

// Whether `device_type` can compute in `precision` with this LibTorch (fp16 autocast needs CUDA).
bool PrecisionSupported(torch::DeviceType device_type, Precision precision);

// The precision autocast computes in on `device_type` in this thread now (kFp32: autocast off).
Precision CurrentAutocast(torch::DeviceType device_type);

class AutocastScope {
 public:
  // kFp32: does nothing.
  AutocastScope(torch::DeviceType device_type, Precision precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  torch::DeviceType type_;
  bool enabled_;
  bool was_enabled_ = false;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_AUTOCAST_H_
