#include "trainer/model/inference_model.h"

#include <algorithm>
#include <utility>

#include "common/file_util.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/device.h"

namespace tunefleet {
namespace trainer {

absl::Status CheckBatchSizeAndDevice(int64_t batch_size, const std::string& device) {
  if (batch_size < 1) return absl::InvalidArgumentError("--batch_size must be >= 1");
  if (device != "auto" && device != "cpu" && device != "cuda") {
    return absl::InvalidArgumentError("--device must be auto, cpu or cuda");
  }
  return absl::OkStatus();
}

absl::StatusOr<InferenceModel> LoadInferenceModel(const std::string& dir) {
  BertCheckpoint info;
  absl::StatusOr<BertModel> bert = LoadBertModel(dir, &info);
  if (!bert.ok()) return bert.status();
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer = LoadFolderTokenizer(dir);
  if (!tokenizer.ok()) return tokenizer.status();
  return InferenceModel{std::move(*bert), std::move(info), std::move(*tokenizer)};
}

std::string PoolingNameOrDefault(const std::string& flag, const BertCheckpoint& info) {
  if (!flag.empty()) return flag;
  return info.pooling.empty() ? "mean" : info.pooling;
}

int64_t MaxLenOrDefault(int64_t flag, const BertCheckpoint& info) {
  int64_t max_len = flag;
  if (max_len == 0) {
    max_len = info.max_seq_length > 0 ? info.max_seq_length : Tokenizer::kDefaultMaxLen;
  }
  return std::min(max_len, MaxSequenceLength(info.config));
}

absl::StatusOr<torch::Device> TargetDevice(const std::string& device, int local_rank) {
  const DeviceInfo selected = SelectDevice(local_rank);
  if (device == "cuda" && !selected.device.is_cuda()) {
    return absl::FailedPreconditionError("--device cuda: no CUDA device");
  }
  return device == "cpu" ? torch::Device(torch::kCPU) : selected.device;
}

}  // namespace trainer
}  // namespace tunefleet
