// trainer_torch: the LibTorch half of the trainer binary, which `trainer` execs for the
// subcommands that need LibTorch (train, encode, eval, predict, mine, convert, worker). Loading
// LibTorch takes a process most of a second; keeping it out of `trainer` itself lets the synthetic
// trainer and `trainer tokenize` start in milliseconds (a sweep of zero-step trials is
// dispatch-bound: bench/). Users run `trainer`; this binary is found beside it and takes the same
// arguments.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "common/cli.h"
#include "trainer/commands/convert_command.h"
#include "trainer/commands/encode_command.h"
#include "trainer/commands/eval_command.h"
#include "trainer/commands/mine_command.h"
#include "trainer/commands/predict_command.h"
#include "trainer/commands/train_command.h"
#include "trainer/commands/worker_command.h"
#include "trainer/tasks/loss_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

// An exception nobody catches — in practice NCCL's watchdog thread giving up on a collective
// that timed out (a peer rank stalled or died) — ends the process with one line, not a trace.
[[noreturn]] void OnTerminate() {
  std::string what = "terminated";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
  }
  what = what.substr(0, what.find('\n'));
  const bool timeout =
      what.find("imeout") != std::string::npos || what.find("imed out") != std::string::npos;
  std::fprintf(stderr, "trainer: error: rank %d: %s%s\n", EnvInt("RANK", 0),
               timeout ? "a collective timed out (train.ddp_timeout_s; a peer rank stalled or "
                         "exited): "
                       : "",
               what.c_str());
  std::fflush(stderr);
  std::_Exit(tunefleet::kExitFailure);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet

int main(int argc, char** argv) {
  std::set_terminate(tunefleet::trainer::OnTerminate);
  tunefleet::InitBinary("trainer", /*rank_from_env=*/true);
  tunefleet::trainer::SetTaskSectionReader(&tunefleet::trainer::LossRegistryReader());
  return tunefleet::RunSubcommands(
      "trainer", "tunefleet's worker, LibTorch part (run it as `trainer`).",
      {{"train", "train a model from a trainer YAML", tunefleet::trainer::RunTrain},
       {"encode", "write sentence embeddings", tunefleet::trainer::RunEncode},
       {"eval", "evaluate a model on a dataset", tunefleet::trainer::RunEval},
       {"predict", "score text pairs with a cross-encoder", tunefleet::trainer::RunPredict},
       {"mine", "mine hard negatives for (anchor, positive) pairs", tunefleet::trainer::RunMine},
       {"convert", "rewrite a Hugging Face encoder folder in tunefleet's layout",
        tunefleet::trainer::RunConvert},
       {"worker", tunefleet::trainer::kWorkerSummary, tunefleet::trainer::RunWorker}},
      argc, argv);
}
