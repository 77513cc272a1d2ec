#include "bench/phase_timer.h"

#include <cmath>

#include "absl/strings/str_cat.h"

#ifdef TUNEFLEET_CUDA
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace tunefleet {
namespace bench {

#ifdef TUNEFLEET_CUDA
struct PhaseTimer::Events {
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> list;
};

PhaseTimer::PhaseTimer(int64_t steps) : events_(std::make_unique<Events>()) {
  for (int64_t i = 0; i < steps * kMarks; ++i) {
    events_->list.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
  }
}

void PhaseTimer::Mark(int point) {
  if (point == 0) ++step_;
  const int64_t i = step_ * kMarks + point;
  if (step_ >= 0 && i < static_cast<int64_t>(events_->list.size())) {
    events_->list[static_cast<size_t>(i)]->record();
  }
}

std::string PhaseTimer::Json() const {
  static const char* kNames[] = {"forward", "backward", "reduce", "optimizer"};
  const auto& events = events_->list;
  const int64_t steps = static_cast<int64_t>(events.size()) / kMarks;
  std::string out = "{";
  for (int p = 0; p + 1 < kMarks; ++p) {
    double sum = 0;
    for (int64_t s = 0; s < steps; ++s) {
      sum += events[static_cast<size_t>(s * kMarks + p)]->elapsed_time(
          *events[static_cast<size_t>(s * kMarks + p + 1)]);
    }
    absl::StrAppend(&out, p == 0 ? "" : ", ", "\"", kNames[p],
                    "\": ", std::round(100 * sum / static_cast<double>(steps)) / 100);
  }
  return out + "}";
}
#else
struct PhaseTimer::Events {};

PhaseTimer::PhaseTimer(int64_t) : events_(std::make_unique<Events>()) {}

void PhaseTimer::Mark(int) {}

std::string PhaseTimer::Json() const { return "null"; }
#endif

PhaseTimer::~PhaseTimer() = default;

}  // namespace bench
}  // namespace tunefleet
