// How `trainer` (which does not link LibTorch, so that `tokenize` and `synthetic` start in
// milliseconds) runs its LibTorch subcommands: it replaces itself with trainer_torch, built
// beside it (common/binary_path.h's FindSiblingBinary), running the same subcommand and
// arguments. LibTorch's glog warnings are dropped (GLOG_minloglevel=2) and NCCL's timeout dump is
// off (TORCH_NCCL_DUMP_ON_TIMEOUT=0), unless the environment already sets them.
// Thread-safety: call from a single-threaded process (execv).
#ifndef TUNEFLEET_TRAINER_COMMANDS_TORCH_EXEC_H_
#define TUNEFLEET_TRAINER_COMMANDS_TORCH_EXEC_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

// Replaces this process with trainer_torch running `subcommand args...`; returns only on error
// (kExitFailure, after one line on stderr).
int ExecTorch(const std::string& subcommand, const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_TORCH_EXEC_H_
