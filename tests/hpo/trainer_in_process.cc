#include "tests/hpo/trainer_in_process.h"

#include "trainer/commands/train_dry_run.h"

namespace tunefleet {
namespace hpo {

AskTrainer InProcessTrainer() {
  return [](const TrainerQuery& q) -> absl::StatusOr<std::string> {
    trainer::DryRunRequest r;
    r.config = q.config;
    r.overrides = q.overrides;
    r.checks = q.checks;
    r.world_size = q.world_size;
    absl::StatusOr<std::string> json = trainer::TrainDryRunJson(r);
    if (!json.ok()) return absl::InvalidArgumentError(json.status().message());
    return json;
  };
}

absl::StatusOr<SweepConfig> LoadSweepConfigInProcess(const std::string& path,
                                                     const std::vector<std::string>& overrides,
                                                     bool multirun) {
  return LoadSweepConfig(path, overrides, multirun, InProcessTrainer());
}

}  // namespace hpo
}  // namespace tunefleet
