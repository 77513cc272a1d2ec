// Where the time of loading a BERT model folder goes, the way `trainer train` loads its
// model.path (the "model" part of its `time` line's setup): a random BERT of the given shape is
// written to --dir once, then, --repeats times, two ways: reading the folder (LoadBertCheckpoint:
// config.json, safetensors), building the BertModel, putting the read weights in
// (LoadBertWeights), and with --device cuda moving it to the GPU. "initialized": the model's
// weights drawn as transformers does, then the read ones copied over them (stop 13's way);
// "not initialized": the dense weights left uninitialized and the read tensors taken over
// (the trainer's way now). Seconds per phase, one line each.
//
//   bazel run -c opt //bench:model_load_bench -- [--layers 12 --hidden 768] [--dir /tmp/mlb]
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "absl/status/status.h"
#include "common/cli.h"
#include "common/logging.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/hf_model_folder.h"

namespace tunefleet {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kProgram[] = "model_load_bench";

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int Main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  int64_t layers = 12, hidden = 768, repeats = 3;
  std::string dir = "/tmp/model_load_bench", device = "cpu";
  CommandLine cli(kProgram, "", "Seconds of each phase of loading a BERT model folder.");
  cli.AddInt("layers", &layers, "encoder layers (12: BERT-base)", "N");
  cli.AddInt("hidden", &hidden, "hidden size (768: BERT-base; heads = hidden / 64)", "N");
  cli.AddInt("repeats", &repeats, "loads timed", "N");
  cli.AddString("dir", &dir, "the model folder written and read", "DIR");
  cli.AddString("device", &device, "cpu or cuda: where the model goes at the end", "D");
  absl::Status parsed = cli.Parse(args);
  if (cli.help_requested()) {
    std::printf("%s", cli.Help().c_str());
    return kExitOk;
  }
  if (parsed.ok() && (layers < 1 || hidden < 64 || hidden % 64 != 0 || repeats < 1)) {
    parsed = absl::InvalidArgumentError("--layers >= 1, --hidden a multiple of 64, --repeats >= 1");
  }
  if (parsed.ok() && device != "cpu" && !(device == "cuda" && torch::cuda::is_available())) {
    parsed = absl::InvalidArgumentError("--device: cpu, or cuda on a host with a GPU");
  }
  if (!parsed.ok()) {
    PrintError(kProgram, parsed);
    return kExitUsage;
  }
  trainer::BertConfig config;
  config.num_hidden_layers = layers;
  config.hidden_size = hidden;
  config.num_attention_heads = hidden / 64;
  config.intermediate_size = 4 * hidden;
  {
    const auto t = Clock::now();
    trainer::BertModel model(config);
    const double built = Since(t);
    const auto w = Clock::now();
    absl::Status s = trainer::SaveBertModel(model, dir, trainer::CheckpointSaveOptions{});
    if (!s.ok()) {
      PrintError(kProgram, s);
      return kExitFailure;
    }
    std::printf("wrote %s: %lld tensors; built in %.3f s, written in %.3f s\n", dir.c_str(),
                static_cast<long long>(model->parameters().size()), built, Since(w));
  }
  for (int64_t r = 0; r < 2 * repeats; ++r) {
    const bool init = r % 2 == 0;
    const auto t0 = Clock::now();
    auto checkpoint = trainer::LoadBertCheckpoint(dir);
    if (!checkpoint.ok()) {
      PrintError(kProgram, checkpoint.status());
      return kExitFailure;
    }
    const double read = Since(t0);
    auto t = Clock::now();
    trainer::BertModel model(checkpoint->config, checkpoint->has_pooler, init);
    const double build = Since(t);
    t = Clock::now();
    absl::Status s = init ? trainer::LoadBertWeights(model, checkpoint->tensors)
                          : trainer::LoadBertWeights(model, std::move(checkpoint->tensors));
    if (!s.ok()) {
      PrintError(kProgram, s);
      return kExitFailure;
    }
    const double load = Since(t);
    t = Clock::now();
    if (device == "cuda") {
      model->to(torch::kCUDA);
      torch::cuda::synchronize();
    }
    const double move = Since(t);
    std::printf(
        "load %lld: read %.3f s, build (%s) %.3f s, copy in %.3f s, to %s %.3f s; "
        "total %.3f s\n",
        static_cast<long long>(r / 2 + 1), read, init ? "initialized" : "not initialized", build,
        load, device.c_str(), move, Since(t0));
  }
  return kExitOk;
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::RunMain(/*role=*/"", tunefleet::bench::Main, argc, argv);
}
