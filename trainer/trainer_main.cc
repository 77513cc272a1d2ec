// trainer: trains, evaluates and encodes BERT / Sentence-BERT models. Runs alone, under any
// torchrun-style launcher (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), or under
// a tunefleet agent.
//
// This binary does not link LibTorch: `tokenize`, `synthetic` and `train --dry_run --json` run
// here and start in milliseconds; `train`, `encode`, `eval`, `convert` and `worker` exec
// trainer_torch (trainer_torch_main.cc), built beside it, with the same arguments.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/binary_path.h"
#include "common/cli.h"
#include "common/logging.h"
#include "trainer/distributed/agent_client.h"
#include "trainer/data/synthetic.h"
#include "trainer/commands/tokenize_command.h"
#include "trainer/commands/train_dry_run.h"

namespace tunefleet {
namespace trainer {
namespace {

int Synthetic(const std::vector<std::string>& args) {
  SyntheticOptions o;
  double lr_effective = o.lr_effective;
  int64_t batch_size = o.batch_size;
  CommandLine cli("trainer synthetic", "",
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

// Replaces this process with trainer_torch running `subcommand args...`; returns only on error.
int ExecTorch(const std::string& subcommand, const std::vector<std::string>& args) {
  absl::StatusOr<std::string> path = FindSiblingBinary("trainer/trainer_torch");
  if (!path.ok()) {
    PrintError(absl::StrCat("trainer ", subcommand).c_str(), path.status());
    return kExitFailure;
  }
  std::vector<std::string> argv = {*path, subcommand};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  // LibTorch's own logging (glog in Debian's build) warns about things the trainer reports
  // itself in one line; keep its errors, drop its warnings, unless the user chose a level.
  ::setenv("GLOG_minloglevel", "2", /*overwrite=*/0);
  // A collective that times out under NCCL ends the process from NCCL's watchdog; without this
  // it first waits a minute for a debug dump nobody reads.
  ::setenv("TORCH_NCCL_DUMP_ON_TIMEOUT", "0", /*overwrite=*/0);
  ::execv(path->c_str(), raw.data());
  PrintError(absl::StrCat("trainer ", subcommand).c_str(),
             absl::InternalError(absl::StrCat("cannot run ", *path, ": ", std::strerror(errno))));
  return kExitFailure;
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet

int main(int argc, char** argv) {
  tunefleet::InitBinary("trainer", /*rank_from_env=*/true);
  auto torch = [](const char* name) {
    return [name](const std::vector<std::string>& args) {
      return tunefleet::trainer::ExecTorch(name, args);
    };
  };
  return tunefleet::RunSubcommands(
      "trainer",
      "tunefleet's worker: BERT / Sentence-BERT training, evaluation, encoding, tokenization.\n"
      "Reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT like torchrun's workers.",
      {{"train", "train a model from a trainer YAML",
        [&torch](const std::vector<std::string>& a) {  // --json: trainer/commands/train_dry_run.h
          using tunefleet::trainer::WantsDryRunJson, tunefleet::trainer::RunTrainDryRunJson;
          return WantsDryRunJson(a) ? RunTrainDryRunJson(a) : torch("train")(a);
        }},
       {"encode", "write sentence embeddings", torch("encode")},
       {"eval", "evaluate a model on a dataset", torch("eval")},
       {"convert", "rewrite a Hugging Face BERT folder in tunefleet's layout", torch("convert")},
       // trainer/commands/worker_command.h's kWorkerSummary (this binary does not link LibTorch).
       {"worker", "Runs trials the agent hands it, one at a time, in this process (warm worker)",
        torch("worker")},
       {"tokenize", "WordPiece-tokenize stdin to JSON lines", tunefleet::trainer::RunTokenize},
       {"synthetic", "the synthetic trainer for testing sweeps", tunefleet::trainer::Synthetic}},
      argc, argv);
}
