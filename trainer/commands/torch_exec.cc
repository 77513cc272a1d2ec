#include "trainer/commands/torch_exec.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/binary_path.h"
#include "common/cli.h"

namespace tunefleet {
namespace trainer {

int ExecTorch(const std::string& subcommand, const std::vector<std::string>& args) {
  absl::StatusOr<std::string> path = FindSiblingBinary("trainer/trainer_torch");
  if (!path.ok()) {
    PrintError(absl::StrCat("trainer ", subcommand).c_str(), path.status());
    return kExitFailure;
  }
  std::vector<std::string> argv = {*path, subcommand};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  // LibTorch's own logging (glog in Debian's build) warns about things the trainer reports
  // itself in one line; keep its errors, drop its warnings, unless the user chose a level.
  ::setenv("GLOG_minloglevel", "2", /*overwrite=*/0);
  // A collective that times out under NCCL ends the process from NCCL's watchdog; without this
  // it first waits a minute for a debug dump nobody reads.
  ::setenv("TORCH_NCCL_DUMP_ON_TIMEOUT", "0", /*overwrite=*/0);
  ::execv(path->c_str(), raw.data());
  PrintError(absl::StrCat("trainer ", subcommand).c_str(),
             absl::InternalError(absl::StrCat("cannot run ", *path, ": ", std::strerror(errno))));
  return kExitFailure;
}

}  // namespace trainer
}  // namespace tunefleet
