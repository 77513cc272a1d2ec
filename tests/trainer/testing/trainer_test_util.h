// Helpers the trainer's tests share: temporary paths (TestTempPath, from
// tests/test_util/temp_dir.h), whole files, slices of data files, metrics.jsonl, the trainer
// config of a golden Hugging Face trajectory (data/golden/train_trajectories.json), and the
// checkpoint of data/bert-tiny-random.
// Thread-safety: stateless, except that FirstLines writes a file.
#ifndef TUNEFLEET_TESTS_TRAINER_TRAINER_TEST_UTIL_H_
#define TUNEFLEET_TESTS_TRAINER_TRAINER_TEST_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "nlohmann/json.hpp"
#include "tests/test_util/temp_dir.h"  // TestTempPath, which the trainer's tests use
#include "trainer/config/train_config.h"
#include "trainer/model/hf_model_folder.h"

namespace tunefleet {
namespace trainer {

// The bytes of the file at `path` ("" when it cannot be read).
std::string ReadAll(const std::string& path);
// Writes `bytes` to `path` (replacing it), failing the test when it cannot.
void WriteAll(const std::string& path, const std::string& bytes);

// Writes the first `rows` lines of `source` to TestTempPath(name); returns that path.
std::string FirstLines(const std::string& source, int rows, const std::string& name);

// Each line of a JSON-lines file (metrics.jsonl), parsed.
std::vector<nlohmann::json> ReadJsonLines(const std::string& path);

// |got - want| / max(|want|, 1e-12).
double RelErr(double got, double want);

// A fp32 STS-B config on bert-tiny-random without dropout, logged every step, no model saved:
// training on `train`, evaluating on `eval`, 16-example batches, 2 of them a step, lr 1e-4;
// tests set the rest (epochs, warmup, evaluation cadence, output.dir).
TrainerConfig TinyStsConfig(const std::string& train, const std::string& eval);

// The trainer config that reproduces golden trajectory `g` (one entry of
// train_trajectories.json: steps, batch, lr, weight_decay, max_grad_norm, dropout): task `type`
// on `data` in `format`, bert-tiny-random with mean pooling, constant rate, fp32, file order, a
// line logged each step, the last model saved to `out`, no checkpoint.
TrainerConfig GoldenTrainerConfig(const nlohmann::json& g, const std::string& type,
                                  const std::string& data, const std::string& format,
                                  const std::string& out);

// data/bert-tiny-random's checkpoint (sharded: an index and two files), read once.
const BertCheckpoint& TinyBertCheckpoint();
// Writes data/bert-tiny-random's config.json and `tensors` (model.safetensors) into `dir`.
void WriteTinyBertFolder(const std::string& dir,
                         const std::map<std::string, torch::Tensor>& tensors);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_TRAINER_TRAINER_TEST_UTIL_H_
