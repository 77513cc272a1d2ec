#include "launcher/agent/agent_staging.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "comm/bulk_fetch.h"
#include "comm/trainer_overrides.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {

absl::StatusOr<std::map<std::string, std::string>> StageFiles(const std::string& host,
                                                              const comm::TrialSpec& spec,
                                                              const std::string& cache_dir) {
  std::map<std::string, std::string> local;
  const std::string server = absl::StrCat(host, ":", spec.stage_port());
  comm::FetchOptions options;
  options.token = spec.stage_token();  // the head's staging server serves nobody else
  for (const comm::StagedPath& staged : spec.stage()) {
    absl::StatusOr<comm::FetchResult> got =
        comm::FetchToCache(server, staged.hash(), cache_dir, options);
    if (!got.ok()) {
      return absl::Status(got.status().code(),
                          absl::StrCat(staged.path(), ": ", got.status().message()));
    }
    if (got->reused) {
      TF_LOG(INFO) << "run " << spec.run_id() << ": staged " << staged.path() << " ("
                   << staged.hash().substr(0, 12) << ") reused from the cache, verified in "
                   << absl::StrFormat("%.3f", got->verify_seconds) << " s: " << got->path;
    } else {
      TF_LOG(INFO) << "run " << spec.run_id() << ": staged " << staged.path() << " ("
                   << staged.hash().substr(0, 12) << ") fetched from " << server << ": "
                   << got->bytes << " bytes in " << absl::StrFormat("%.3f", got->transfer_seconds)
                   << " s ("
                   << absl::StrFormat("%.0f", got->transfer_seconds > 0
                                                  ? got->bytes / 1e6 / got->transfer_seconds
                                                  : 0.0)
                   << " MB/s), verified: " << got->path;
    }
    local[staged.path()] = got->path;
  }
  return local;
}

std::string RewriteStaged(const std::string& arg, const std::map<std::string, std::string>& local) {
  for (const auto& [path, copy] : local) {
    if (arg == path) return copy;
    if (arg.size() > path.size() && absl::EndsWith(arg, path) &&
        arg[arg.size() - path.size() - 1] == '=') {
      return arg.substr(0, arg.size() - path.size()) + copy;
    }
  }
  return arg;
}

std::vector<std::string> RewriteStagedTrial(const std::map<std::string, std::string>& local,
                                            comm::TrialSpec* spec) {
  std::vector<std::string> rewritten;
  for (std::string& arg : *spec->mutable_argv()) {
    std::string local_arg = RewriteStaged(arg, local);
    if (local_arg != arg) rewritten.push_back(local_arg);
    arg = std::move(local_arg);
  }
  for (comm::TrainerOverride& o : *spec->mutable_overrides()) {
    if (o.value_case() != comm::TrainerOverride::kStringValue) continue;
    std::string local_path = RewriteStaged(o.string_value(), local);
    if (local_path == o.string_value()) continue;
    o.set_string_value(std::move(local_path));
    rewritten.push_back(comm::OverrideArg(o));
  }
  return rewritten;
}

}  // namespace launcher
}  // namespace tunefleet
