// The launcher backends' one list: every --start_agents value the head knows, one entry per
// backend module (launcher_backend.h), in the order --help and the errors name them. Adding a
// backend adds one line to all_backends.cc; nothing registers itself (static libraries would
// drop a self-registering object nobody references).
//
// Thread-safety: the list is immutable once made (made on first use, thread-safe).
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_ALL_BACKENDS_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_ALL_BACKENDS_H_

#include <vector>

#include "launcher/backends/launcher_backend.h"

namespace tunefleet {
namespace launcher {

const std::vector<const LauncherBackend*>& AllBackends();

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_ALL_BACKENDS_H_
