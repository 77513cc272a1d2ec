#include "launcher/backends/none_backend.h"

namespace tunefleet {
namespace launcher {

const LauncherBackend& NoneLauncherBackend() {
  static const auto* const kBackend = new NoneBackend();
  return *kBackend;
}

}  // namespace launcher
}  // namespace tunefleet
