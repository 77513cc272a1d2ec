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
