#include "trainer/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace tunefleet {
namespace trainer {

LrSchedule::LrSchedule(const std::string& kind, double lr, double warmup_ratio, int64_t total_steps)
    : linear_(kind == "linear"),
      lr_(lr),
      warmup_(static_cast<int64_t>(std::ceil(warmup_ratio * static_cast<double>(total_steps)))),
      total_(total_steps) {}

double LrSchedule::At(int64_t step) const {
  if (step < warmup_) {
    return lr_ * static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_));
  }
  if (!linear_) return lr_;
  return lr_ * std::max(0.0, static_cast<double>(total_ - step) /
                                 static_cast<double>(std::max<int64_t>(1, total_ - warmup_)));
}

}  // namespace trainer
}  // namespace tunefleet
