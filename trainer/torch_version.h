// TF_TORCH_AT_LEAST(major, minor): whether this LibTorch is at least that version, for the few
// APIs that differ between Debian's LibTorch 1.13 and PyTorch 2.x (autocast, fused AdamW,
// foreach operations taking tensors).
#ifndef TUNEFLEET_TRAINER_TORCH_VERSION_H_
#define TUNEFLEET_TRAINER_TORCH_VERSION_H_

#include <torch/version.h>

#define TF_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||     \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#endif  // TUNEFLEET_TRAINER_TORCH_VERSION_H_
