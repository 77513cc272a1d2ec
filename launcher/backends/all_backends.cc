#include "launcher/backends/all_backends.h"

#include "launcher/backends/none_backend.h"
#include "launcher/backends/pdsh_backend.h"
#include "launcher/backends/slurm_backend.h"
#include "launcher/backends/ssh_backend.h"

namespace tunefleet {
namespace launcher {

const std::vector<const LauncherBackend*>& AllBackends() {
  static const auto* const kBackends = new std::vector<const LauncherBackend*>{
      &SshLauncherBackend(),
      &SlurmLauncherBackend(),
      &NoneLauncherBackend(),
      &PdshLauncherBackend(),
  };
  return *kBackends;
}

}  // namespace launcher
}  // namespace tunefleet
