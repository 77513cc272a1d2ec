// Heartbeat bookkeeping for one peer, as in ZeroMQ's Majordomo pattern: send a heartbeat when
// nothing else was sent for an interval; the peer is dead once nothing at all was heard from it
// for `liveness` intervals (3 by default).
//
// Thread-safety: not thread-safe; owned by one poll loop.
#ifndef TUNEFLEET_COMM_LIVENESS_H_
#define TUNEFLEET_COMM_LIVENESS_H_

#include "absl/time/time.h"

namespace tunefleet {
namespace comm {

inline constexpr int kDefaultLiveness = 3;

class Liveness {
 public:
  Liveness(absl::Duration interval, absl::Time now, int liveness = kDefaultLiveness);

  void Heard(absl::Time now) { last_heard_ = now; }
  void Sent(absl::Time now) { last_sent_ = now; }
  bool HeartbeatDue(absl::Time now) const { return now - last_sent_ >= interval_; }
  bool Alive(absl::Time now) const { return now - last_heard_ < interval_ * liveness_; }
  absl::Time last_heard() const { return last_heard_; }
  absl::Duration interval() const { return interval_; }
  // Time until the next heartbeat is due (zero when due), for poll timeouts.
  absl::Duration UntilHeartbeat(absl::Time now) const;

 private:
  absl::Duration interval_;
  int liveness_;
  absl::Time last_heard_;
  absl::Time last_sent_;
};

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_LIVENESS_H_
