#include "trainer/commands/train_preflight.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "trainer/data/tokenizer.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/memory_formula.h"
#include "trainer/model/model_family_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

// The model's config.json, or why it cannot be read (the first failure, one line).
absl::StatusOr<BertConfig> ReadFolderConfig(const std::string& dir) {
  const std::string file = JoinPath(dir, "config.json");
  struct stat st;
  if (::stat(file.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": the model folder holds no config.json"));
  }
  if (::access(file.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": config.json is not readable (", std::strerror(errno), ")"));
  }
  // What every trial would fail on: a config.json the trainer cannot read.
  absl::StatusOr<BertConfig> config = ReadModelConfig(file);
  if (!config.ok()) return absl::InvalidArgumentError(config.status().message());
  return config;
}

// What the memory estimate takes besides the batch, from the trainer config.
struct EstimateInputs {
  BertConfig model;
  int64_t parameters = 0;
  int64_t max_seq_len = 0;  // the model's longest input, or model.max_seq_len when shorter
  int passes = 2;           // encoder passes a step: 1 for classification
  bool fp32 = false;
  bool grad_checkpointing = false;
  int optimizer_shards = 1;
};

EstimateInputs InputsOf(const TrainerConfig& c, const BertConfig& model, int64_t world_size) {
  EstimateInputs in;
  in.model = model;
  in.parameters = EncoderParameters(model);
  in.max_seq_len = model.max_position_embeddings;
  if (c.model.max_seq_len > 0) {
    in.max_seq_len = std::min<int64_t>(in.max_seq_len, c.model.max_seq_len);
  }
  // One pass for classification; with task.datasets, the largest dataset's shape: 2 unless all
  // of them are classification.
  bool one_pass = c.task.type == "classification";
  for (const DatasetConfig& d : c.task.datasets) one_pass = one_pass && d.type == "classification";
  in.passes = one_pass ? 1 : 2;
  in.fp32 = c.train.precision == "fp32";
  in.grad_checkpointing = c.train.grad_checkpointing;
  in.optimizer_shards = c.train.strategy == "zero1" ? static_cast<int>(world_size) : 1;
  return in;
}

// Each batch size's estimates, ascending.
nlohmann::ordered_json Memory(const EstimateInputs& in, const std::set<int64_t>& batches) {
  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (int64_t batch : batches) {
    const MemoryEstimate least =
        LeastTrainingMemory(in.model, in.parameters, batch, in.passes, in.fp32,
                            in.grad_checkpointing, in.optimizer_shards);
    const MemoryEstimate upper =
        EstimateTrainingMemoryBytes(in.model, in.parameters, batch, in.max_seq_len, in.passes,
                                    in.fp32, in.grad_checkpointing, in.optimizer_shards);
    memory.push_back(
        {{"batch", batch}, {"least_bytes", least.total_bytes()}, {"bytes", upper.total_bytes()}});
  }
  return memory;
}

}  // namespace

std::string ModelFolderError(const std::string& dir) {
  absl::StatusOr<BertConfig> config = ReadFolderConfig(dir);
  if (!config.ok()) return std::string(config.status().message());
  // And a tokenizer it cannot read (none, or a malformed tokenizer.json / vocab.txt / .model).
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer = LoadFolderTokenizer(dir);
  if (!tokenizer.ok()) return std::string(tokenizer.status().message());
  return "";
}

nlohmann::ordered_json TrainPreflightJson(const TrainerConfig& config, const std::string& path,
                                          const std::vector<std::string>& overrides,
                                          const std::vector<std::string>& checks,
                                          int64_t world_size) {
  // The model folders and batch sizes the checks set, besides the config's own.
  std::vector<std::string> other_models;
  std::set<int64_t> batches = {config.train.batch_size};
  for (const std::string& check : checks) {
    std::vector<std::string> with = overrides;
    with.push_back(check);
    absl::StatusOr<TrainerConfig> probed = LoadTrainerConfig(path, with, kUnknownGpus);
    if (!probed.ok()) continue;
    batches.insert(probed->train.batch_size);
    const std::string& dir = probed->model.path;
    if (dir != config.model.path &&
        std::find(other_models.begin(), other_models.end(), dir) == other_models.end()) {
      other_models.push_back(dir);
    }
  }
  nlohmann::ordered_json out;
  absl::StatusOr<BertConfig> model = ReadFolderConfig(config.model.path);
  nlohmann::ordered_json m = {{"key", "model.path"}, {"path", config.model.path}};
  m["error"] =
      model.ok() ? ModelFolderError(config.model.path) : std::string(model.status().message());
  m["model_type"] = model.ok() ? model->model_type : std::string();
  m["parameters"] = model.ok() ? EncoderParameters(*model) : int64_t{0};
  out["model"] = std::move(m);
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  for (const std::string& dir : other_models) {
    models.push_back({{"path", dir}, {"error", ModelFolderError(dir)}});
  }
  out["models"] = std::move(models);
  out["least_tokens"] = kLeastTokens;
  out["memory"] = model.ok() ? Memory(InputsOf(config, *model, world_size), batches)
                             : nlohmann::ordered_json::array();
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
