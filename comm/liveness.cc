#include "comm/liveness.h"

#include <algorithm>

namespace tunefleet {
namespace comm {

Liveness::Liveness(absl::Duration interval, absl::Time now, int liveness)
    : interval_(interval), liveness_(liveness), last_heard_(now), last_sent_(now) {}

absl::Duration Liveness::UntilHeartbeat(absl::Time now) const {
  return std::max(absl::ZeroDuration(), interval_ - (now - last_sent_));
}

}  // namespace comm
}  // namespace tunefleet
