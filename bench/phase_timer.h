// --phases of bench/train_throughput_bench.cc: CUDA events on the step's stream at the
// trainer's five marks of every timed step (start, after forward, after backward, once the
// gradients are reduced, after the optimizer). Where the stream waited for the gradient
// all-reduce (mark 3), "reduce" is the communication that backward did not hide; the GPU's
// clock, not the host's. Without a CUDA build of LibTorch it records nothing (the bench refuses
// --phases there).
// Thread-safety: not thread-safe; marks come from the training thread.
#ifndef TUNEFLEET_BENCH_PHASE_TIMER_H_
#define TUNEFLEET_BENCH_PHASE_TIMER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tunefleet {
namespace bench {

class PhaseTimer {
 public:
  static constexpr int kMarks = 5;
  // Events for `steps` steps.
  explicit PhaseTimer(int64_t steps);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

  // Records mark `point` (0..4) of the current step; mark 0 opens the next step.
  void Mark(int point);
  // After a device synchronization: mean ms of forward, backward, reduce and optimizer, as a
  // JSON object ({"forward": 12.3, ...}).
  std::string Json() const;

 private:
  struct Events;
  std::unique_ptr<Events> events_;
  int64_t step_ = -1;
};

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_PHASE_TIMER_H_
