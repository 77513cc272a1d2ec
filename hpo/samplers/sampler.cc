#include "hpo/samplers/sampler.h"

namespace tunefleet {
namespace hpo {

bool LostWithItsNode(const Trial& t) {
  // The head's reason for the runs of an agent it lost: "agent NAME lost (no heartbeat ...)".
  return t.state == TrialState::kFail && t.fail_reason.rfind("agent ", 0) == 0 &&
         t.fail_reason.find(" lost (") != std::string::npos;
}

bool CountsAsFailedAttempt(const Trial& t) {
  return t.state == TrialState::kFail && t.fail_reason.rfind("interrupted", 0) != 0 &&
         !LostWithItsNode(t);
}

bool PointSettled(const Study& study, int64_t point, int64_t max_failures) {
  int64_t failures = 0, node_losses = 0;
  for (const Trial& t : study.trials) {
    if (t.point != point) continue;
    if (t.state == TrialState::kComplete || t.state == TrialState::kPruned) return true;
    if (CountsAsFailedAttempt(t)) ++failures;
    if (LostWithItsNode(t)) ++node_losses;
  }
  return failures > max_failures || node_losses > kMaxNodeLosses;
}

Params SampleTrial(Sampler& sampler, const Study& study, Trial* trial, const SearchSpace& space) {
  sampler.BeforeTrial(study, trial);
  const SearchSpace relative_space = sampler.InferRelativeSearchSpace(study, *trial);
  Params params = sampler.SampleRelative(study, *trial, relative_space);
  for (const auto& [name, distribution] : space) {
    if (params.count(name) == 0) {
      params[name] = sampler.SampleIndependent(study, *trial, name, distribution);
    }
  }
  trial->params = params;
  return params;
}

}  // namespace hpo
}  // namespace tunefleet
