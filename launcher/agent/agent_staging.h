// The agent's side of staging (TrialSpec.stage; the head's side: launcher/head/head_staging.h):
// fetching a trial's staged paths from the head's UCX bulk server into the node's
// content-addressed cache, and pointing the trainer's arguments at the local copies.
// Thread-safety: StageFiles runs on a thread of its own (the agent's loop goes on meanwhile);
// the others are pure functions.
#ifndef TUNEFLEET_LAUNCHER_AGENT_AGENT_STAGING_H_
#define TUNEFLEET_LAUNCHER_AGENT_AGENT_STAGING_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace launcher {

// Fetches every staged path of the trial from HOST:spec.stage_port (HOST: where the head's
// staging server listens, comm::EndpointHost of the head's endpoint), presenting
// spec.stage_token (the server refuses fetches without it), into `cache_dir` (reusing
// verified copies), logging each; returns path -> local copy, or the first error, naming the path.
absl::StatusOr<std::map<std::string, std::string>> StageFiles(const std::string& host,
                                                              const comm::TrialSpec& spec,
                                                              const std::string& cache_dir);

// An argument naming a staged path (PATH, or KEY=PATH) names its local copy instead.
std::string RewriteStaged(const std::string& arg, const std::map<std::string, std::string>& local);

// RewriteStaged on each of spec's argv, and on each string value of its typed overrides that is
// a staged path; returns the rewritten ones as the trainer gets them ("model.path=/cache/..").
std::vector<std::string> RewriteStagedTrial(const std::map<std::string, std::string>& local,
                                            comm::TrialSpec* spec);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_AGENT_STAGING_H_
