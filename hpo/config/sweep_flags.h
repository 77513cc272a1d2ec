// `hpo sweep`'s flags, checked before anything starts (no config loaded, no head or agent
// started), so that a bad flag is one line and exit 2:
//
//   --head     tcp://HOST:PORT (PORT 1-65535; HOST a name of at most 253 characters, an IPv4
//              address or [IPv6]) or
//              ipc://PATH (another user's private socket is refused at once)
//   --keys     only with --head (dev mode's local head runs without keys); the folder must
//              load (comm::LoadClientKeys: readable, and private as ssh's StrictModes wants)
//   --slots, --head_grace_s  >= 0
//   --max_failed_share       in [0, 1]
//
// Errors echo values clipped (common/clip.h). Thread-safety: stateless.
#ifndef TUNEFLEET_HPO_CONFIG_SWEEP_FLAGS_H_
#define TUNEFLEET_HPO_CONFIG_SWEEP_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace tunefleet {
namespace hpo {

struct SweepFlags {
  std::string head;
  std::string keys;
  int64_t slots = 0;
  int64_t head_grace_s = 300;
  double max_failed_share = 0.5;
};

// InvalidArgument naming the flag and its (clipped) value when `endpoint` is not
// tcp://HOST:PORT or ipc://PATH.
absl::Status CheckHeadEndpoint(const std::string& endpoint);
// The first bad flag, as above.
absl::Status CheckSweepFlags(const SweepFlags& flags);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_SWEEP_FLAGS_H_
