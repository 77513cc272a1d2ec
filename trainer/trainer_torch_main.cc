// trainer_torch: the LibTorch half of the trainer binary, which `trainer` execs for the
// subcommands that need LibTorch (train, encode, eval). Loading LibTorch takes a process most of
// a second; keeping it out of `trainer` itself lets the synthetic trainer and `trainer tokenize`
// start in milliseconds (a sweep of zero-step trials is dispatch-bound: bench/). Users run
// `trainer`; this binary is found beside it and takes the same arguments.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "common/cli.h"
#include "common/logging.h"
#include "trainer/convert_command.h"
#include "trainer/device.h"
#include "trainer/encode_command.h"
#include "trainer/train_config.h"

namespace tunefleet {
namespace trainer {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  int out;
  return v != nullptr && absl::SimpleAtoi(v, &out) ? out : fallback;
}

// Parses `cli` over `args`; prints help or the error. Returns -1 to go on, else an exit code.
int ParseOrExit(CommandLine& cli, const std::vector<std::string>& args, const char* program) {
  absl::Status status = cli.Parse(args);
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (!status.ok()) {
    PrintError(program, status);
    return kExitUsage;
  }
  return -1;
}

int Train(const std::vector<std::string>& args) {
  std::string config_path;
  bool dry_run = false;
  CommandLine cli("trainer train", "[key=value ...]",
                  "Trains a model as the trainer YAML describes; key=value arguments override it\n"
                  "(train.lr=3e-5 model.pooling=cls). Writes OUTPUT_DIR/metrics.jsonl.");
  cli.AddString("config", &config_path, "trainer YAML (required)", "TRAIN.yaml");
  cli.AddBool("dry_run", &dry_run, "validate the config, print it with the device; train nothing");
  cli.AllowOverrides();
  if (int rc = ParseOrExit(cli, args, "trainer train"); rc >= 0) return rc;
  if (config_path.empty()) {
    PrintError("trainer train", absl::InvalidArgumentError("--config is required"));
    return kExitUsage;
  }
  auto config = LoadTrainerConfig(config_path, cli.overrides());
  if (!config.ok()) {
    PrintError("trainer train", config.status());
    return kExitUsage;
  }
  const DeviceInfo device = SelectDevice(EnvInt("LOCAL_RANK", -1));
  const TrainerConfig& c = *config;
  std::cout << "config   " << c.source << "\n"
            << "model    " << c.model.path << " (pooling " << c.model.pooling << ", max_seq_len "
            << c.model.max_seq_len << ", dropout " << c.model.dropout << ")\n"
            << "task     " << c.task.type << " on " << c.task.train << " (" << c.task.format
            << ")" << (c.task.eval.empty() ? "" : ", eval " + c.task.eval) << "\n"
            << "train    epochs " << c.train.epochs << ", max_steps " << c.train.max_steps
            << ", batch " << c.train.batch_size << " x grad_accum " << c.train.grad_accum
            << ", lr " << c.train.lr << " (" << c.train.schedule << ", warmup "
            << c.train.warmup_ratio << "), " << c.train.precision << ", seed " << c.train.seed
            << "\n"
            << "output   " << c.output.dir << " (save " << c.output.save << ")\n"
            << "device   " << device.device.str() << " (" << device.name << "), "
            << DescribeLibTorch() << "\n";
  if (dry_run) return kExitOk;
  PrintError("trainer train",
             absl::UnavailableError("BERT training is not in this build yet; --dry_run validates"));
  return kExitFailure;
}

int Eval(const std::vector<std::string>& args) {
  std::string model, task = "sts", data;
  CommandLine cli("trainer eval", "", "Evaluates a model: STS Spearman correlation or accuracy.");
  cli.AddString("model", &model, "Hugging Face model directory (required)", "DIR");
  cli.AddString("task", &task, "sts | nli | classification", "TASK");
  cli.AddString("data", &data, "evaluation data file (required)", "FILE");
  if (int rc = ParseOrExit(cli, args, "trainer eval"); rc >= 0) return rc;
  if (model.empty() || data.empty()) {
    PrintError("trainer eval", absl::InvalidArgumentError("--model and --data are required"));
    return kExitUsage;
  }
  PrintError("trainer eval", absl::UnavailableError("evaluation is not in this build yet"));
  return kExitFailure;
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet

int main(int argc, char** argv) {
  tunefleet::ChdirToUserWorkingDirectory();
  tunefleet::SetLogRole("trainer");
  tunefleet::SetLogRank(tunefleet::trainer::EnvInt("RANK", -1));
  return tunefleet::RunSubcommands(
      "trainer", "tunefleet's worker, LibTorch part (run it as `trainer`).",
      {{"train", "train a model from a trainer YAML", tunefleet::trainer::Train},
       {"encode", "write sentence embeddings", tunefleet::trainer::RunEncode},
       {"eval", "evaluate a model on a dataset", tunefleet::trainer::Eval},
       {"convert", "rewrite a Hugging Face BERT folder in tunefleet's layout",
        tunefleet::trainer::RunConvert}},
      argc, argv);
}
