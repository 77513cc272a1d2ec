#include "trainer/io/background_writer.h"

#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace trainer {

BackgroundWriter::~BackgroundWriter() { (void)Wait(); }

absl::Status BackgroundWriter::Start(std::function<absl::Status()> job) {
  absl::Status previous = Wait();
  if (!previous.ok()) return previous;
  pending_ = std::async(std::launch::async, [job = std::move(job)]() -> absl::Status {
    try {
      return job();
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat("background write failed: ", e.what()));
    }
  });
  return absl::OkStatus();
}

absl::Status BackgroundWriter::Wait() {
  if (!pending_.valid()) return absl::OkStatus();
  return pending_.get();
}

}  // namespace trainer
}  // namespace tunefleet
