#include "trainer/commands/convert_command.h"

#include <iostream>

#include "absl/status/status.h"
#include "common/cli.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/hf_model_folder.h"
#include "trainer/model/pooling.h"

namespace tunefleet {
namespace trainer {

int RunConvert(const std::vector<std::string>& args) {
  std::string model_dir, output_dir, pooling;
  CommandLine cli("trainer convert", "",
                  "Rewrites a Hugging Face encoder folder (bert, roberta, xlm-roberta, mpnet,\n"
                  "distilbert) in tunefleet's layout (config.json, one float32 model.safetensors,\n"
                  "the tokenizer files), loadable by transformers and, with --pooling, by\n"
                  "sentence-transformers.");
  cli.AddString("model", &model_dir, "model folder to read (required)", "DIR");
  cli.AddString("output", &output_dir, "folder to write (required)", "DIR");
  cli.AddString("pooling", &pooling, "also write sentence-transformers files with this pooling",
                "mean|cls|max");
  if (int rc = ParseOrExit(cli, args, "trainer convert"); rc >= 0) return rc;
  absl::Status parsed;
  if (model_dir.empty() || output_dir.empty()) {
    parsed = absl::InvalidArgumentError("--model and --output are required");
  }
  if (parsed.ok() && !pooling.empty()) parsed = ParsePooling(pooling).status();
  if (!parsed.ok()) {
    PrintError("trainer convert", parsed);
    return kExitUsage;
  }
  BertCheckpoint info;
  absl::StatusOr<BertModel> model = LoadBertModel(model_dir, &info);
  if (!model.ok()) {
    PrintError("trainer convert", model.status());
    return kExitUsage;
  }
  CheckpointSaveOptions options;
  options.source_dir = model_dir;
  options.pooling = pooling;
  absl::Status saved = SaveBertModel(*model, output_dir, options);
  if (!saved.ok()) {
    PrintError("trainer convert", saved);
    return kExitFailure;
  }
  std::cout << "wrote " << output_dir << " from " << model_dir << "\n";
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
