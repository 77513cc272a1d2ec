#include "trainer/train/model_saver.h"

#include <string>
#include <utility>

#include "common/file_util.h"
#include "common/status_macros.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/hf_model_folder.h"

namespace tunefleet {
namespace trainer {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// task.prompts and model.include_prompt as the saved model says them (config_sentence_transformers
// .json, 1_Pooling/config.json): prompts by column name as they are; one prompt for every text as
// "default", the default prompt (SentenceTransformer.encode then prepends it to every text, as
// training did).
StPrompts SavedPrompts(const TrainerConfig& c) {
  StPrompts p;
  p.include_prompt = c.model.include_prompt;
  p.prompts = c.task.prompts;
  if (!c.task.prompt.empty()) {
    p.prompts = {{"default", c.task.prompt}};
    p.default_prompt_name = "default";
  }
  return p;
}

}  // namespace

ModelSaver::ModelSaver(const TrainerConfig& config) : c_(config) {}

double ModelSaver::SecondsSinceCheckpoint() const { return SecondsSince(last_checkpoint_); }

absl::Status ModelSaver::Wait() {
  const auto start = Clock::now();
  absl::Status s = writer_.Wait();
  seconds_ += SecondsSince(start);
  return s;
}

absl::Status ModelSaver::Stage(TaskModel& model, int64_t step) {
  const auto start = Clock::now();
  RETURN_IF_ERROR(writer_.Wait());  // it may be reading the staged buffers
  staged_encoder_ = model_encoder_.Copy(BertStateDict(model->bert()));
  staged_head_ = model_head_.Copy(model->HeadStateDict());
  staged_ = true;
  staged_step_ = step;
  seconds_ += SecondsSince(start);
  return absl::OkStatus();
}

absl::Status ModelSaver::Save(TaskModel& model,
                              const std::map<std::string, torch::Tensor>& optimizer_state,
                              std::optional<TrainProgress> checkpoint) {
  const auto start = Clock::now();
  // The writer may still read the buffers: it finishes first. Then host copies (the training
  // goes on changing the live tensors) and the files on the background thread.
  RETURN_IF_ERROR(writer_.Wait());
  const bool write_model = staged_, write_checkpoint = checkpoint.has_value();
  staged_ = false;
  const BertConfig config = model->bert()->config();
  TrainStateFiles state;
  if (write_checkpoint) {
    state.config = config;
    if (write_model && staged_step_ == checkpoint->step) {  // the same weights: copied once
      state.encoder = staged_encoder_;
      state.head = staged_head_;
    } else {
      state.encoder = encoder_copy_.Copy(BertStateDict(model->bert()));
      state.head = head_copy_.Copy(model->HeadStateDict());
    }
    state.optimizer = optimizer_copy_.Copy(optimizer_state);
    state.progress = *std::move(checkpoint);
    last_checkpoint_ = Clock::now();
  }
  CheckpointSaveOptions options;
  options.source_dir = c_.model.path;
  options.pooling = c_.model.pooling;
  options.max_seq_length = c_.model.max_seq_len;
  options.prompts = SavedPrompts(c_);
  using Tensors = HostSnapshot::Tensors;
  const Tensors encoder = write_model ? staged_encoder_ : Tensors();
  // A cross-encoder is one transformers folder (*ForSequenceClassification), head included;
  // another task's head goes beside the encoder, in head.safetensors.
  const bool cross_encoder = c_.model.kind == "cross_encoder";
  if (write_model && cross_encoder) options.head = staged_head_;
  const Tensors head = write_model && !cross_encoder ? staged_head_ : Tensors();
  absl::Status started = writer_.Start([write_model, write_checkpoint, config, encoder, head,
                                        options, state = std::move(state), dir = c_.output.dir,
                                        source = c_.model.path]() -> absl::Status {
    if (write_model) {  // first: a checkpoint's best must be on disk with it
      const std::string model_dir = JoinPath(dir, "model");
      RETURN_IF_ERROR(SaveBertCheckpoint(model_dir, config, encoder, options));
      if (!head.empty()) {
        RETURN_IF_ERROR(WriteSafetensors(JoinPath(model_dir, "head.safetensors"), head));
      }
    }
    if (write_checkpoint) RETURN_IF_ERROR(SaveTrainState(dir, state, source));
    return absl::OkStatus();
  });
  seconds_ += SecondsSince(start);
  return started;
}

}  // namespace trainer
}  // namespace tunefleet
