#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

const char* TrialStateName(TrialState state) {
  switch (state) {
    case TrialState::kRunning:
      return "RUNNING";
    case TrialState::kComplete:
      return "COMPLETE";
    case TrialState::kPruned:
      return "PRUNED";
    case TrialState::kFail:
      return "FAIL";
    case TrialState::kWaiting:
      return "WAITING";
  }
  return "UNKNOWN";
}

std::vector<const Trial*> Study::TrialsInState(TrialState state) const {
  std::vector<const Trial*> out;
  for (const Trial& t : trials) {
    if (t.state == state) out.push_back(&t);
  }
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
