// Learning-rate schedules of transformers (optimization.py), as a function of the optimizer
// step s = 0, 1, ... (the rate used for the (s+1)-th update, as LambdaLR gives it):
//   linear:   lr * s / W                        for s < W (warm-up from 0)
//             lr * max(0, (T - s) / (T - W))    after (get_linear_schedule_with_warmup)
//   constant: lr * s / W for s < W, then lr     (get_constant_schedule_with_warmup; W = 0: lr)
// T is the number of optimizer steps, W = ceil(warmup_ratio * T) (TrainingArguments'
// get_warmup_steps). Thread-safety: immutable.
#ifndef TUNEFLEET_TRAINER_OPTIM_LR_SCHEDULE_H_
#define TUNEFLEET_TRAINER_OPTIM_LR_SCHEDULE_H_

#include <cstdint>
#include <string>

namespace tunefleet {
namespace trainer {

class LrSchedule {
 public:
  // `kind` is "linear" or "constant" (the trainer YAML's train.schedule; anything else is
  // constant).
  LrSchedule(const std::string& kind, double lr, double warmup_ratio, int64_t total_steps);

  double At(int64_t step) const;
  int64_t warmup_steps() const { return warmup_; }
  int64_t total_steps() const { return total_; }

 private:
  bool linear_;
  double lr_;
  int64_t warmup_;
  int64_t total_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_OPTIM_LR_SCHEDULE_H_
