#include "trainer/commands/synthetic_command.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/cli.h"
#include "common/logging.h"
#include "trainer/data/synthetic.h"
#include "trainer/distributed/agent_client.h"

namespace tunefleet {
namespace trainer {

int RunSyntheticCommand(const std::vector<std::string>& args) {
  SyntheticOptions o;
  double lr_effective = o.lr_effective;
  int64_t batch_size = o.batch_size;
  CommandLine cli(
      "trainer synthetic", "",
      "The synthetic trainer (trainer/data/synthetic.h): reports a documented function of\n"
      "(lr_effective, batch_size, step) plus seeded noise at every step, so sweeps can\n"
      "be tested without training; step s lies at s * samples_per_step samples. Under\n"
      "an agent it reports to it and stops when told.");
  cli.AddInt("steps", &o.steps, "steps to report");
  cli.AddDouble("seconds_per_step", &o.seconds_per_step, "time each step takes");
  cli.AddDouble("noise", &o.noise, "standard deviation of the seeded noise");
  cli.AddInt("seed", &o.seed, "noise seed");
  cli.AddDouble("lr_effective", &lr_effective, "learning rate after scaling");
  cli.AddInt("batch_size", &batch_size, "per-rank batch size");
  cli.AddInt("samples_per_step", &o.samples_per_step,
             "samples each step adds on the reports' resource axis (independent of batch size)");
  cli.AddString("metric", &o.metric, "name the value is reported under", "NAME");
  bool oom_when_shared = false;
  cli.AddBool("oom_when_shared", &oom_when_shared,
              "exit as out of GPU memory (code 3) when started beside other trials on its GPU "
              "(the agent's TUNEFLEET_GPU_TRIALS > 1): tests of trials that share a GPU");
  if (int rc = ParseOrExit(cli, args, "trainer synthetic"); rc >= 0) return rc;
  absl::Status bad;
  if (o.steps < 0) bad = absl::InvalidArgumentError("--steps must be >= 0");
  if (o.seconds_per_step < 0) bad = absl::InvalidArgumentError("--seconds_per_step must be >= 0");
  if (o.noise < 0) bad = absl::InvalidArgumentError("--noise must be >= 0");
  if (lr_effective <= 0) bad = absl::InvalidArgumentError("--lr_effective must be > 0");
  if (batch_size < 1) bad = absl::InvalidArgumentError("--batch_size must be >= 1");
  if (o.samples_per_step < 1) bad = absl::InvalidArgumentError("--samples_per_step must be >= 1");
  if (!bad.ok()) {
    PrintError("trainer synthetic", bad);
    return kExitUsage;
  }
  if (const char* sharing = std::getenv("TUNEFLEET_GPU_TRIALS");
      oom_when_shared && sharing != nullptr && std::atoi(sharing) > 1) {
    std::fprintf(stderr,
                 "trainer synthetic: out of memory: started beside %d other trial(s) on "
                 "its GPU (--oom_when_shared)\n",
                 std::atoi(sharing) - 1);
    return kExitOutOfMemory;
  }
  o.lr_effective = lr_effective;
  o.batch_size = batch_size;
  // Only rank 0 reports (synthetic ranks share no process group): the others sleep through
  // the same steps and end, so a multi-rank synthetic trial occupies all its slots.
  const char* rank = std::getenv("RANK");
  absl::StatusOr<std::unique_ptr<AgentClient>> client = std::unique_ptr<AgentClient>();
  if (rank == nullptr || std::string(rank) == "0") client = AgentClient::FromEnvironment();
  if (!client.ok()) {
    PrintError("trainer synthetic", client.status());
    return kExitFailure;
  }
  if (*client != nullptr) SetLogTrial((*client)->trial());
  absl::Status s = RunSynthetic(o, client->get());
  if (!s.ok()) {
    PrintError("trainer synthetic", s);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
