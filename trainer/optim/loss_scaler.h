// Dynamic loss scaling for fp16 training, with torch.cuda.amp.GradScaler's policy: the loss is
// multiplied by the scale before backward; after it the gradients are divided by it; a step whose
// gradients hold an inf or NaN is skipped and the scale halved; after `growth_interval`
// consecutive good steps the scale doubles. Defaults are GradScaler's (2^16, 2, 0.5, 2000).
// The caller detects inf/NaN from the total gradient norm, which it computes anyway.
// Thread-safety: not thread-safe.
#ifndef TUNEFLEET_TRAINER_OPTIM_LOSS_SCALER_H_
#define TUNEFLEET_TRAINER_OPTIM_LOSS_SCALER_H_

#include <cstdint>

namespace tunefleet {
namespace trainer {

class LossScaler {
 public:
  struct Options {
    double init_scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;
  };
  LossScaler() : LossScaler(Options()) {}
  explicit LossScaler(const Options& options) : options_(options), scale_(options.init_scale) {}

  double scale() const { return scale_; }
  // After each optimizer step (taken or skipped): `found_inf` says whether it was skipped.
  void Update(bool found_inf);
  int64_t skipped_steps() const { return skipped_; }

  // For checkpoints.
  int64_t good_steps() const { return good_steps_; }
  void Restore(double scale, int64_t good_steps, int64_t skipped) {
    scale_ = scale;
    good_steps_ = good_steps;
    skipped_ = skipped;
  }

 private:
  Options options_;
  double scale_;
  int64_t good_steps_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_OPTIM_LOSS_SCALER_H_
