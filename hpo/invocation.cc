#include "hpo/invocation.h"

#include <errno.h>  // program_invocation_name (glibc)

#include <cstdlib>

#include "common/shell_quote.h"

namespace tunefleet {
namespace hpo {

std::string HpoInvocation(const std::string& argv0, const char* bazel_workspace) {
  if (bazel_workspace != nullptr && *bazel_workspace != '\0') return "bazel run //hpo --";
  return argv0.empty() ? "hpo" : ShellQuote(argv0);
}

std::string HpoInvocation() {
  const char* argv0 = program_invocation_name;
  return HpoInvocation(argv0 == nullptr ? "" : argv0, std::getenv("BUILD_WORKSPACE_DIRECTORY"));
}

}  // namespace hpo
}  // namespace tunefleet
