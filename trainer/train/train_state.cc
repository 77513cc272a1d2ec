#include "trainer/train/train_state.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "trainer/io/safetensors.h"
#include "trainer/model/hf_model_folder.h"

namespace tunefleet {
namespace trainer {
namespace {

std::map<std::string, torch::Tensor> OnCpu(const std::map<std::string, torch::Tensor>& in) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, t] : in) out[name] = t.detach().to(torch::kCPU).contiguous();
  return out;
}

std::string ProgressJson(const TrainProgress& p) {
  nlohmann::json j;
  j["step"] = p.step;
  j["epoch"] = p.epoch;
  j["batch_in_epoch"] = p.batch_in_epoch;
  if (std::isfinite(p.best)) j["best"] = p.best;
  j["best_step"] = p.best_step;
  j["loss_scale"] = p.loss_scale;
  j["scaler_good_steps"] = p.scaler_good_steps;
  j["scaler_skipped"] = p.scaler_skipped;
  j["fingerprint"] = p.fingerprint;
  return j.dump(2) + "\n";
}

absl::StatusOr<TrainProgress> ParseProgress(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const char* key) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": \"", key, "\" is missing or malformed"));
  };
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  TrainProgress p;
  for (const auto& [key, field] : {std::pair<const char*, int64_t*>{"step", &p.step},
                                   {"epoch", &p.epoch},
                                   {"batch_in_epoch", &p.batch_in_epoch},
                                   {"best_step", &p.best_step},
                                   {"scaler_good_steps", &p.scaler_good_steps},
                                   {"scaler_skipped", &p.scaler_skipped}}) {
    if (!j.contains(key) || !j[key].is_number_integer()) return bad(key);
    *field = j[key].get<int64_t>();
  }
  if (p.step < 0 || p.epoch < 0 || p.batch_in_epoch < 0) return bad("step");
  p.best = j.contains("best") && j["best"].is_number() ? j["best"].get<double>()
                                                       : std::numeric_limits<double>::quiet_NaN();
  if (!j.contains("loss_scale") || !j["loss_scale"].is_number()) return bad("loss_scale");
  p.loss_scale = j["loss_scale"].get<double>();
  if (!j.contains("fingerprint") || !j["fingerprint"].is_string()) return bad("fingerprint");
  p.fingerprint = j["fingerprint"].get<std::string>();
  return p;
}

}  // namespace

absl::Status SaveTrainState(const std::string& output_dir, const TrainStateFiles& state,
                            const std::string& source_dir) {
  const std::string dir = JoinPath(output_dir, "checkpoint");
  const std::string tmp = JoinPath(output_dir, "checkpoint.tmp");
  const std::string old = JoinPath(output_dir, "checkpoint.old");
  RETURN_IF_ERROR(RemoveTree(tmp));
  CheckpointSaveOptions options;
  options.source_dir = source_dir;
  RETURN_IF_ERROR(SaveBertCheckpoint(tmp, state.config, state.encoder, options));
  if (!state.head.empty()) {
    RETURN_IF_ERROR(WriteSafetensors(JoinPath(tmp, "head.safetensors"), OnCpu(state.head)));
  }
  RETURN_IF_ERROR(WriteSafetensors(JoinPath(tmp, "optimizer.safetensors"), OnCpu(state.optimizer)));
  RETURN_IF_ERROR(
      WriteFileAtomically(JoinPath(tmp, "trainer_state.json"), ProgressJson(state.progress)));
  // Swap: checkpoint -> checkpoint.old, checkpoint.tmp -> checkpoint, drop checkpoint.old.
  if (PathExists(dir)) {
    RETURN_IF_ERROR(RemoveTree(old));
    RETURN_IF_ERROR(RenamePath(dir, old));
  }
  RETURN_IF_ERROR(RenamePath(tmp, dir));
  return RemoveTree(old);
}

absl::StatusOr<TrainStateFiles> LoadTrainState(const std::string& output_dir) {
  std::string dir = JoinPath(output_dir, "checkpoint");
  if (!IsFile(JoinPath(dir, "trainer_state.json"))) {
    const std::string old = JoinPath(output_dir, "checkpoint.old");
    if (!IsFile(JoinPath(old, "trainer_state.json"))) {
      return absl::NotFoundError(absl::StrCat(dir, ": no checkpoint to resume from"));
    }
    dir = old;
  }
  TrainStateFiles state;
  ASSIGN_OR_RETURN(state.progress, ParseProgress(JoinPath(dir, "trainer_state.json")));
  ASSIGN_OR_RETURN(BertCheckpoint encoder, LoadBertCheckpoint(dir));
  state.config = encoder.config;
  state.encoder = std::move(encoder.tensors);
  if (IsFile(JoinPath(dir, "head.safetensors"))) {
    ASSIGN_OR_RETURN(SafetensorsContents head, ReadSafetensors(JoinPath(dir, "head.safetensors")));
    state.head = std::move(head.tensors);
  }
  ASSIGN_OR_RETURN(SafetensorsContents optimizer,
                   ReadSafetensors(JoinPath(dir, "optimizer.safetensors")));
  state.optimizer = std::move(optimizer.tensors);
  return state;
}

}  // namespace trainer
}  // namespace tunefleet
