// How the user runs hpo, for the commands its hints print ("continue with: ... sweep ...
// --resume", "(... status --journal J)"), so that a hint works pasted as it is: under
// `bazel run` (BUILD_WORKSPACE_DIRECTORY set) hpo is not on PATH and its path is a runfiles
// one, so the hint is `bazel run //hpo -- ...` (which, as hpo does, runs in the folder bazel
// was run from: common/cli.h ChdirToUserWorkingDirectory); otherwise it is argv[0] as the user
// typed it: `hpo` when the shell found it on PATH, `./bazel-bin/hpo/hpo` or `/opt/tf/bin/hpo`
// when a path was typed.
//
// Thread-safety: pure functions; HpoInvocation() reads this process's argv[0] and environment.
#ifndef TUNEFLEET_HPO_INVOCATION_H_
#define TUNEFLEET_HPO_INVOCATION_H_

#include <string>

namespace tunefleet {
namespace hpo {

// The words that run hpo, quoted for the shell: "bazel run //hpo --" when `bazel_workspace`
// (BUILD_WORKSPACE_DIRECTORY) is set and not empty, else `argv0` ("hpo" when it is empty).
std::string HpoInvocation(const std::string& argv0, const char* bazel_workspace);
// The same for this process: its argv[0] (program_invocation_name) and its environment.
std::string HpoInvocation();

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_INVOCATION_H_
