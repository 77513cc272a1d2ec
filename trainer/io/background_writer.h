// Runs file writes (checkpoints) on a background thread, one at a time, so that training goes on
// while they reach the disk. Start() first waits for the write still in flight, so at most one
// runs and they finish in order; Wait() waits for it. A write's error comes back from the next
// Start() or Wait(), never lost: the destructor waits too (and drops the status only then).
// The job must own everything it touches (copies of the tensors, not the live ones).
// Thread-safety: Start() and Wait() from one thread (the training loop).
#ifndef TUNEFLEET_TRAINER_IO_BACKGROUND_WRITER_H_
#define TUNEFLEET_TRAINER_IO_BACKGROUND_WRITER_H_

#include <functional>
#include <future>

#include "absl/status/status.h"

namespace tunefleet {
namespace trainer {

class BackgroundWriter {
 public:
  BackgroundWriter() = default;
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Waits for the previous job; if it failed, returns its error and does not start `job`.
  absl::Status Start(std::function<absl::Status()> job);
  // Waits for the job in flight (if any); its status.
  absl::Status Wait();
  // Whether a job has been started and not yet waited for.
  bool busy() const { return pending_.valid(); }

 private:
  std::future<absl::Status> pending_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_IO_BACKGROUND_WRITER_H_
