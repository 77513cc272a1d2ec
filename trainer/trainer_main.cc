// trainer: trains, evaluates and encodes BERT / Sentence-BERT models. Runs alone, under any
// torchrun-style launcher (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), or under
// a tunefleet agent.
//
// This binary does not link LibTorch: `tokenize` and `synthetic` run here and start in
// milliseconds; `train`, `encode`, `eval`, `predict`, `mine`, `convert` and `worker` exec
// trainer_torch (trainer_torch_main.cc), built beside it, with the same arguments
// (trainer/commands/torch_exec.h).
#include <string>
#include <vector>

#include "common/cli.h"
#include "trainer/commands/synthetic_command.h"
#include "trainer/commands/tokenize_command.h"
#include "trainer/commands/torch_exec.h"

int main(int argc, char** argv) {
  namespace tt = tunefleet::trainer;
  tunefleet::InitBinary("trainer", /*rank_from_env=*/true);
  auto torch = [](const char* name) {
    return [name](const std::vector<std::string>& args) { return tt::ExecTorch(name, args); };
  };
  return tunefleet::RunSubcommands(
      "trainer",
      "tunefleet's worker: BERT / Sentence-BERT training, evaluation, encoding, tokenization.\n"
      "Reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT like torchrun's workers.",
      {{"train", "train a model from a trainer YAML", torch("train")},
       {"encode", "write sentence embeddings", torch("encode")},
       {"eval", "evaluate a model on a dataset", torch("eval")},
       {"predict", "score text pairs with a cross-encoder", torch("predict")},
       {"mine", "mine hard negatives for (anchor, positive) pairs", torch("mine")},
       {"convert", "rewrite a Hugging Face encoder folder in tunefleet's layout", torch("convert")},
       // trainer/commands/worker_command.h's kWorkerSummary (this binary does not link LibTorch).
       {"worker", "Runs trials the agent hands it, one at a time, in this process (warm worker)",
        torch("worker")},
       {"tokenize", "WordPiece-tokenize stdin to JSON lines", tt::RunTokenize},
       {"synthetic", "the synthetic trainer for testing sweeps", tt::RunSyntheticCommand}},
      argc, argv);
}
