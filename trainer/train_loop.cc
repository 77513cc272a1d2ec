#include "trainer/train_loop.h"

#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "trainer/adamw.h"
#include "trainer/autocast.h"
#include "trainer/background_writer.h"
#include "trainer/bert_model.h"
#include "trainer/datasets.h"
#include "trainer/eval_schedule.h"
#include "trainer/evaluator.h"
#include "trainer/grad_clip.h"
#include "trainer/grad_sync.h"
#include "trainer/host_snapshot.h"
#include "trainer/loss_scaler.h"
#include "trainer/lr_schedule.h"
#include "trainer/memory_estimate.h"
#include "trainer/metrics_log.h"
#include "trainer/pooling.h"
#include "trainer/progress_watchdog.h"
#include "trainer/safetensors.h"
#include "trainer/step_graphs.h"
#include "trainer/task_data.h"
#include "trainer/task_model.h"
#include "trainer/train_state.h"
#include "trainer/wordpiece_tokenizer.h"

namespace tunefleet {
namespace trainer {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string InFolder(const std::string& dir, const char* name) { return JoinPath(dir, name); }

// A model folder's encoder with the config's dropout, in train mode on the CPU.
absl::StatusOr<BertModel> LoadEncoder(const TrainerConfig& config) {
  ASSIGN_OR_RETURN(BertCheckpoint checkpoint, LoadBertCheckpoint(config.model.path));
  BertConfig bert = checkpoint.config;
  bert.hidden_dropout_prob = config.model.dropout;
  bert.attention_probs_dropout_prob = config.model.dropout;
  BertModel model(bert, checkpoint.has_pooler, /*init_weights=*/false);  // all loaded below
  if (!checkpoint.has_pooler) {
    for (auto it = checkpoint.tensors.begin(); it != checkpoint.tensors.end();) {
      it = absl::StartsWith(it->first, "pooler.") ? checkpoint.tensors.erase(it) : std::next(it);
    }
  }
  absl::Status s = LoadBertWeights(model, std::move(checkpoint.tensors));
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(config.model.path, ": ", s.message()));
  return model;
}

// Everything a run holds.
class Run {
 public:
  Run(const TrainerConfig& config, const TrainOptions& options)
      : c_(config),
        o_(options),
        device_(options.device),
        group_(options.group != nullptr && options.group->size() > 1 ? options.group : nullptr),
        rank_(group_ != nullptr ? group_->rank() : 0),
        world_(group_ != nullptr ? group_->size() : 1),
        quiet_(options.quiet || rank_ != 0) {}

  absl::StatusOr<TrainSummary> Go() {
    DecideGraphs();
    // CUDA graphs: the whole run on a side stream, the model and the gradient hooks included
    // (trainer/step_graphs.h).
    std::optional<SideStreamScope> side;
    if (graphs_) side.emplace(device_);
    const auto setup_start = Clock::now();
    RETURN_IF_ERROR(Setup());
    summary_.times.setup = SecondsSince(setup_start);
    const auto start = Clock::now();
    try {
      RETURN_IF_ERROR(Loop());
    } catch (const c10::Error& e) {
      const std::string what = e.what_without_backtrace();
      if (absl::StrContains(what, "out of memory")) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "out of memory at train.batch_size %d (estimate %.2f GiB): lower the batch size or "
            "set train.grad_checkpointing: true",
            c_.train.batch_size, GiB(summary_.estimate_bytes)));
      }
      return absl::InternalError(absl::StrCat("training failed at step ", step_ + 1, ": ",
                                              what.substr(0, what.find('\n'))));
    }
    summary_.seconds = SecondsSince(start);
    summary_.steps = step_;
    summary_.samples = samples_seen_;
    summary_.best = best_;
    summary_.best_step = best_step_;
    summary_.peak_bytes = PeakMemoryBytes(device_);
    summary_.cuda_graphs = step_graphs_ != nullptr ? step_graphs_->captured() : 0;
    if (step_graphs_ != nullptr) summary_.times.captures = step_graphs_->capture_seconds();
    return summary_;
  }

 private:
  absl::Status Setup();
  absl::Status Loop();
  // train.eval_batch_size, or the default for the device (measured: docs/BENCHMARKS.md).
  int64_t EvalBatchSize() const {
    if (c_.train.eval_batch_size > 0) return c_.train.eval_batch_size;
    return std::max<int64_t>(c_.train.batch_size, device_.is_cuda() ? 256 : 64);
  }
  // Sets graphs_ and graphs_note_ from the config and the device.
  void DecideGraphs();
  // Forward and backward of `micro` batches starting at batch_in_epoch_, replaying graphs when
  // `graphed`; the mean loss.
  torch::Tensor ForwardBackward(int64_t micro, bool graphed);
  // One micro-step of `micro` on `batch` (on the device): gradients zeroed first when `first`,
  // forward, backward of the loss / micro; under DDP the buckets communicate when `sync`
  // (complete after GradSync::Finish). Returns the loss, detached.
  torch::Tensor MicroStep(const TaskBatch& batch, int64_t micro, bool first, bool sync);
  // After a step's micro-steps: gradient norm, clipping, AdamW at `lr` on the device (the
  // update StepGraphs captures). Returns the norm.
  torch::Tensor UpdateAt(const torch::Tensor& lr);
  // Whether this step replays graphs: graphs_ and a step already run in this process with every
  // parameter's gradient and optimizer state in place (else the first replayed step would
  // allocate them inside a capture).
  bool Graphed();
  // Writes the line of step_ (evaluating first when `point` and there is eval data) and
  // reports it when `point`: the key of an evaluation point (the last step's: samples_seen_),
  // or nullopt for a plain log line.
  absl::Status EndOfLine(std::optional<int64_t> point, bool last);
  // Reports the evaluation point of step_ under `key` (the final report when `last`) to the
  // agent (rank 0, when there is one) and records it in the summary; on a stop decision, which
  // every rank learns here, sets summary_.stopped.
  absl::Status ReportAt(int64_t key, bool last, const std::map<std::string, double>& values);
  // Holds the model as it is now (host copies) to be written as OUTPUT_DIR/model by the next
  // Save(): a better model found before then replaces it unwritten.
  absl::Status StageModel();
  // On the background writer: the staged model, if any, then, when `checkpoint`,
  // OUTPUT_DIR/checkpoint as it is now (from host copies). Waits only for the copies (and for
  // the write before, whose error it returns).
  absl::Status Save(bool checkpoint);
  // Whether the run ends by writing the model: output.save last, or best with nothing to judge.
  bool LastModelWanted() const {
    return c_.output.save == "last" || (c_.output.save == "best" && eval_ == nullptr);
  }
  // Waits for the write in flight (counted as saving time); its status.
  absl::Status WaitForWriter();
  std::string Fingerprint() const;
  // Padding to multiples of 8 on GPUs (aligned tensor-core shapes, few distinct shapes).
  int64_t pad_multiple() const { return device_.is_cuda() ? 8 : 1; }
  // This rank's examples of the epoch (DistributedSampler: the shuffled order, padded by
  // repetition to a multiple of the world size, every world_size-th from position rank).
  void NewEpochOrder() {
    order_ = RankShard(EpochOrder(train_->size(), static_cast<uint64_t>(c_.train.seed), epoch_,
                                  c_.train.shuffle),
                       rank_, world_);
  }
  // The mean over ranks of a value every rank holds (all ranks call it at the same point).
  absl::StatusOr<double> MeanOverRanks(const torch::Tensor& value);
  // Rank 0's `stop` on every rank.
  absl::StatusOr<bool> AgreeOnStop(bool stop);

  const TrainerConfig& c_;
  const TrainOptions& o_;
  torch::Device device_;
  comm::ProcessGroup* group_;  // null for one process
  int rank_;
  int world_;
  bool quiet_;
  std::unique_ptr<GradSync> grad_sync_;
  bool graphs_ = false;
  std::string graphs_note_;  // why not, or "" when graphs_
  std::unique_ptr<StepGraphs> step_graphs_;
  int64_t steps_run_ = 0;  // in this process
  std::unique_ptr<ProgressWatchdog> watchdog_;  // data parallel only
  // The model and checkpoints reach the disk on a background thread, from host copies of the
  // state, one write at a time; the run waits for the last before it ends.
  HostSnapshot model_encoder_, model_head_;  // the staged model
  HostSnapshot encoder_copy_, head_copy_, optimizer_copy_;  // the checkpoint
  HostSnapshot::Tensors staged_encoder_, staged_head_;
  bool model_staged_ = false;  // not yet handed to the writer
  int64_t model_step_ = -1;    // the step of the model staged last
  Clock::time_point last_checkpoint_;  // or the loop's start
  BackgroundWriter writer_;  // after the buffers it reads: destroyed (waited for) first
  void Pet() {
    if (watchdog_ != nullptr) watchdog_->Pet();
  }
  Precision precision_ = Precision::kFp32;
  TaskType type_ = TaskType::kSts;
  std::unique_ptr<TaskData> train_, eval_;
  TaskModel model_{nullptr};
  std::vector<torch::Tensor> params_;
  std::unique_ptr<AdamW> optimizer_;
  std::unique_ptr<LrSchedule> schedule_;
  LossScaler scaler_;
  MetricsLog log_;

  int64_t batches_per_epoch_ = 0;
  int64_t steps_per_epoch_ = 0;
  int64_t total_steps_ = 0;
  int64_t step_ = 0;
  int64_t epoch_ = 0;
  int64_t batch_in_epoch_ = 0;
  std::vector<int64_t> order_;
  std::optional<EvalSchedule> eval_schedule_;
  int64_t samples_seen_ = 0;  // after step_: SamplesSeen(epoch_, batch_in_epoch_)

  // Since the last line.
  torch::Tensor loss_sum_;  // on the device, summed over steps
  int64_t loss_steps_ = 0;
  int64_t samples_ = 0;
  Clock::time_point line_start_;
  torch::Tensor last_norm_;
  double last_lr_ = 0;

  double best_ = kNaN;
  int64_t best_step_ = -1;
  TrainSummary summary_;
};

std::string Run::Fingerprint() const {
  const absl::StatusOr<uint64_t> size = FileSize(c_.task.train);
  return absl::StrCat(c_.task.type, " ", c_.task.train, " (", size.ok() ? *size : 0, " bytes, ",
                      c_.task.format, "), batch ", c_.train.batch_size, " x grad_accum ",
                      c_.train.grad_accum, world_ > 1 ? absl::StrCat(" x ", world_, " ranks") : "",
                      ", ", total_steps_, " steps, seed ", c_.train.seed,
                      c_.train.shuffle ? ", shuffled" : ", in order");
}

absl::Status Run::Setup() {
  ASSIGN_OR_RETURN(precision_, ParsePrecision(c_.train.precision));
  ASSIGN_OR_RETURN(type_, ParseTaskType(c_.task.type));
  if (!PrecisionSupported(device_.type(), precision_)) {
    return absl::InvalidArgumentError(absl::StrCat(
        c_.source, ": train.precision ", c_.train.precision, " needs a GPU (on ", device_.str(),
        " use bf16 or fp32)"));
  }
  auto phase = Clock::now();
  ASSIGN_OR_RETURN(WordPieceTokenizer tokenizer,
                   WordPieceTokenizer::FromVocabFile(InFolder(c_.model.path, "vocab.txt")));
  ASSIGN_OR_RETURN(BertModel encoder, LoadEncoder(c_));
  summary_.times.setup_model = SecondsSince(phase);
  phase = Clock::now();
  const int64_t max_len = std::min<int64_t>(c_.model.max_seq_len,
                                            encoder->config().max_position_embeddings);
  // Every rank reads the data; rank 0 alone warns about invalid UTF-8 in it.
  std::ostream* const data_warnings = rank_ == 0 ? &std::cerr : nullptr;
  ASSIGN_OR_RETURN(std::vector<Example> train_rows,
                   ReadDataset(c_.task.train, c_.task.format, data_warnings));
  ASSIGN_OR_RETURN(TaskData train, TaskData::Make(type_, train_rows, c_.task.format, tokenizer,
                                                  max_len, c_.task.train));
  train_ = std::make_unique<TaskData>(std::move(train));
  int64_t num_labels = std::max<int64_t>(train_->num_labels(), 2);
  if (!c_.task.eval.empty()) {
    ASSIGN_OR_RETURN(std::vector<Example> eval_rows,
                     ReadDataset(c_.task.eval, c_.task.format, data_warnings));
    const TaskType eval_type = type_ == TaskType::kMnrl ? TaskType::kSts : type_;
    ASSIGN_OR_RETURN(TaskData eval, TaskData::Make(eval_type, eval_rows, c_.task.format,
                                                   tokenizer, max_len, c_.task.eval));
    eval_ = std::make_unique<TaskData>(std::move(eval));
    num_labels = std::max(num_labels, eval_->num_labels());
  }
  summary_.times.setup_data = SecondsSince(phase);
  if (c_.task.num_labels > 0) {
    if (num_labels > c_.task.num_labels && HasClassifier(type_)) {
      return absl::InvalidArgumentError(absl::StrCat(
          c_.source, ": task.num_labels is ", c_.task.num_labels, " but the data has label ",
          num_labels - 1));
    }
    num_labels = c_.task.num_labels;
  }
  ASSIGN_OR_RETURN(Pooling pooling, ParsePooling(c_.model.pooling));
  if (type_ == TaskType::kClassification && !encoder->has_pooler()) {
    return absl::InvalidArgumentError(absl::StrCat(
        c_.model.path, ": has no pooler weights, which task type classification needs"));
  }

  torch::manual_seed(static_cast<uint64_t>(c_.train.seed));
  encoder->set_gradient_checkpointing(c_.train.grad_checkpointing);
  model_ = TaskModel(encoder, pooling, type_, num_labels);
  if (!c_.model.head.empty()) {
    ASSIGN_OR_RETURN(SafetensorsContents head,
                     ReadSafetensors(c_.model.head, SafetensorsReadOptions{true}));
    absl::Status s = model_->LoadHead(head.tensors);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(c_.model.head, ": ", s.message()));
  }

  const int64_t shard = (train_->size() + world_ - 1) / world_;  // examples per rank and epoch
  batches_per_epoch_ = (shard + c_.train.batch_size - 1) / c_.train.batch_size;
  steps_per_epoch_ = (batches_per_epoch_ + c_.train.grad_accum - 1) / c_.train.grad_accum;
  total_steps_ = c_.train.max_steps > 0 ? c_.train.max_steps : c_.train.epochs * steps_per_epoch_;
  absl::StatusOr<EvalSchedule> evals = EvalSchedule::Make(c_.train, train_->size(), world_);
  if (!evals.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(c_.source, ": ", evals.status().message()));
  }
  eval_schedule_ = *std::move(evals);
  summary_.total_steps = total_steps_;
  summary_.primary_metric = PrimaryMetric(type_);
  schedule_ = std::make_unique<LrSchedule>(c_.train.schedule, c_.train.lr, c_.train.warmup_ratio,
                                           total_steps_);

  if (absl::Status s = MakeDirs(c_.output.dir); !s.ok()) {
    return absl::PermissionDeniedError(absl::StrCat("output.dir: ", s.message()));
  }

  TrainStateFiles resumed;
  if (o_.resume) {
    ASSIGN_OR_RETURN(resumed, LoadTrainState(c_.output.dir));
    if (resumed.progress.fingerprint != Fingerprint()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot resume from ", c_.output.dir, "/checkpoint: it was made for ",
          resumed.progress.fingerprint, "; this run is ", Fingerprint()));
    }
    absl::Status s = LoadBertWeights(model_->bert(), resumed.encoder);
    if (s.ok() && !resumed.head.empty()) s = model_->LoadHead(resumed.head);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(c_.output.dir, "/checkpoint: ", s.message()));
    }
    step_ = resumed.progress.step;
    epoch_ = resumed.progress.epoch;
    batch_in_epoch_ = resumed.progress.batch_in_epoch;
    best_ = resumed.progress.best;
    best_step_ = resumed.progress.best_step;
    scaler_.Restore(resumed.progress.loss_scale > 0 ? resumed.progress.loss_scale : scaler_.scale(),
                    resumed.progress.scaler_good_steps, resumed.progress.scaler_skipped);
    torch::manual_seed(static_cast<uint64_t>(c_.train.seed + step_));
  }
  samples_seen_ = eval_schedule_->SamplesSeen(epoch_, batch_in_epoch_);

  model_->to(device_);
  model_->train();
  params_ = model_->TrainableParameters();
  model_->set_process_group(group_, c_.task.mnrl_gather);
  if (group_ != nullptr) {
    grad_sync_ = std::make_unique<GradSync>(group_, params_, c_.train.ddp_bucket_mb << 20);
    RETURN_IF_ERROR(grad_sync_->BroadcastParameters());
  }
  optimizer_ = std::make_unique<AdamW>(
      params_, AdamWOptions{0.9, 0.999, 1e-8, c_.train.weight_decay});
  if (o_.resume) {
    absl::Status s = optimizer_->LoadStateDict(resumed.optimizer);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(c_.output.dir, "/checkpoint: ", s.message()));
    }
  }
  if (graphs_) {
    step_graphs_ = std::make_unique<StepGraphs>(
        device_,
        [this](const TaskBatch& batch, int64_t micro, bool first, bool sync) {
          torch::Tensor loss = MicroStep(batch, micro, first, sync);
          if (sync && grad_sync_ != nullptr) {
            const absl::Status s = grad_sync_->Finish();
            TORCH_CHECK(s.ok(), std::string(s.message()));
          }
          return loss;
        },
        [this](const torch::Tensor& lr) { return UpdateAt(lr); });
  }
  if (rank_ == 0) {
    RETURN_IF_ERROR(log_.Open(InFolder(c_.output.dir, "metrics.jsonl"), o_.resume ? step_ : -1));
  }

  int64_t parameters = 0;
  for (const torch::Tensor& p : params_) parameters += p.numel();
  const MemoryEstimate estimate = EstimateTrainingMemory(
      model_->bert()->config(), parameters, c_.train.batch_size, max_len,
      type_ == TaskType::kClassification ? 1 : 2, precision_, c_.train.grad_checkpointing);
  summary_.estimate_bytes = estimate.total_bytes();
  if (!quiet_) {
    std::printf("data     %lld training examples%s; %lld steps (%lld an epoch)%s\n",
                static_cast<long long>(train_->size()),
                eval_ ? absl::StrCat(", ", eval_->size(), " for evaluation").c_str() : "",
                static_cast<long long>(total_steps_), static_cast<long long>(steps_per_epoch_),
                o_.resume ? absl::StrCat(", resuming after step ", step_).c_str() : "");
    std::printf("memory   estimate %s\n", estimate.Describe().c_str());
    std::printf("optim    AdamW (%s), %s, warmup %lld steps\n", optimizer_->implementation(),
                c_.train.schedule.c_str(), static_cast<long long>(schedule_->warmup_steps()));
    if (device_.is_cuda()) {
      std::printf("steps    %s\n", graphs_ ? "replayed as CUDA graphs from the second step "
                                            "(train.cuda_graphs)"
                                          : absl::StrCat("eager: ", graphs_note_).c_str());
    }
    if (group_ != nullptr) {
      std::printf("ddp      %d ranks (%s), batch %lld per rank = %lld global, %lld gradient "
                  "buckets of <= %lld MiB\n",
                  world_, comm::ProcessGroup::BackendName(group_->backend()),
                  static_cast<long long>(c_.train.batch_size),
                  static_cast<long long>(c_.train.batch_size * world_ * c_.train.grad_accum),
                  static_cast<long long>(grad_sync_->num_buckets()),
                  static_cast<long long>(c_.train.ddp_bucket_mb));
    }
    std::fflush(stdout);
  }
  ResetPeakMemory(device_);
  return absl::OkStatus();
}

void Run::DecideGraphs() {
  const std::string& want = c_.train.cuda_graphs;
  if (!device_.is_cuda()) {
    graphs_note_ = "not on a GPU";
  } else if (want == "false") {
    graphs_note_ = "train.cuda_graphs: false";
  } else if (!StepGraphs::Available()) {
    graphs_note_ = "this LibTorch cannot capture CUDA graphs";
  } else if (c_.train.precision == "fp16") {
    graphs_note_ = "fp16's loss scaling decides on the host whether a step happens "
                   "(bf16 replays CUDA graphs)";
  } else if (c_.train.grad_checkpointing) {
    graphs_note_ = "train.grad_checkpointing re-runs layers under saved random states, "
                   "which a CUDA graph cannot replay";
  } else if (world_ > 1 && want == "auto") {
    graphs_note_ = "CUDA graphs under DDP only with train.cuda_graphs: true";
  } else {
    graphs_ = true;
  }
}

bool Run::Graphed() {
  if (step_graphs_ == nullptr || steps_run_ == 0) return false;
  if (steps_run_ == 1) {  // once: can the captures find everything in place?
    bool ready = optimizer_->fused();
    for (const torch::Tensor& p : params_) ready = ready && p.grad().defined();
    if (!ready) {
      step_graphs_.reset();
      graphs_note_ = "a parameter got no gradient in the first step";
      if (!quiet_) std::printf("steps    eager from now: %s\n", graphs_note_.c_str());
      return false;
    }
  }
  return true;
}

torch::Tensor Run::MicroStep(const TaskBatch& batch, int64_t micro, bool first, bool sync) {
  if (first) {
    if (grad_sync_ != nullptr) {
      grad_sync_->ZeroGrads();
    } else if (step_graphs_ != nullptr) {  // persistent gradients (else they are none here)
      std::vector<torch::Tensor> grads = DefinedGrads(params_);
      if (!grads.empty()) at::_foreach_zero_(grads);
    }
  }
  const double loss_scale = precision_ == Precision::kFp16 ? scaler_.scale() : 1.0;
  torch::Tensor loss;
  {
    AutocastScope autocast(device_.type(), precision_);
    loss = model_->Loss(batch).to(torch::kFloat);
  }
  if (grad_sync_ != nullptr) grad_sync_->set_sync(sync);
  (loss * (loss_scale / static_cast<double>(micro))).backward();
  return loss.detach();
}

torch::Tensor Run::UpdateAt(const torch::Tensor& lr) {
  std::vector<torch::Tensor> grads = DefinedGrads(params_);
  torch::Tensor norm = TotalGradNorm(grads);
  if (c_.train.max_grad_norm > 0) ClipGradsByTotalNorm(grads, norm, c_.train.max_grad_norm);
  optimizer_->StepWithDeviceLr(lr);
  return norm;
}

torch::Tensor Run::ForwardBackward(int64_t micro, bool graphed) {
  const int64_t n = static_cast<int64_t>(order_.size()), b = c_.train.batch_size;
  torch::Tensor total;
  for (int64_t m = 0; m < micro; ++m) {
    const int64_t begin = (batch_in_epoch_ + m) * b;
    std::vector<int64_t> indices(order_.begin() + begin, order_.begin() + std::min(n, begin + b));
    samples_ += static_cast<int64_t>(indices.size());
    const TaskBatch batch = train_->Batch(indices, pad_multiple());
    const bool first = m == 0, sync = m == micro - 1;
    // A replayed graph's loss is overwritten by its next replay: cloned.
    const torch::Tensor loss = graphed ? step_graphs_->MicroStep(batch, micro, first, sync).clone()
                                       : MicroStep(batch.To(device_), micro, first, sync);
    total = total.defined() ? total + loss : loss;
  }
  return total / static_cast<double>(micro);
}

absl::Status Run::Loop() {
  if (group_ != nullptr) {
    const int rank = rank_;
    // A peer that stalls or dies leaves this rank blocked in a collective: the watchdog ends
    // it a little before the collectives' own timeout (ddp_timeout_s), so that the trial fails
    // within that timeout whatever the backend does (NCCL's watchdog held a rank a minute past
    // it). The margin, 10% and at least 1 s, covers the process's exit.
    const auto timeout = std::chrono::milliseconds(c_.train.ddp_timeout_s * 1000);
    const auto limit = std::max(std::chrono::milliseconds(500),
                                timeout - std::max(std::chrono::milliseconds(1000), timeout / 10));
    const int64_t timeout_s = c_.train.ddp_timeout_s;
    watchdog_ = std::make_unique<ProgressWatchdog>(
        limit,
        [rank, timeout_s](std::chrono::milliseconds idle) {
          std::fprintf(stderr,
                       "trainer train: error: rank %d: no progress for %.1f s "
                       "(train.ddp_timeout_s %lld): a peer rank stalled or exited\n",
                       rank, static_cast<double>(idle.count()) / 1000.0,
                       static_cast<long long>(timeout_s));
          std::fflush(stderr);
          std::_Exit(1);
        });
  }
  NewEpochOrder();
  line_start_ = Clock::now();
  last_checkpoint_ = line_start_;
  while (step_ < total_steps_) {
    if (batch_in_epoch_ >= batches_per_epoch_) {
      ++epoch_;
      batch_in_epoch_ = 0;
      NewEpochOrder();
    }
    const auto step_start = Clock::now();
    const int64_t micro = std::min(c_.train.grad_accum, batches_per_epoch_ - batch_in_epoch_);
    const bool graphed = Graphed();
    const torch::Tensor loss = ForwardBackward(micro, graphed);
    const int64_t samples_before = samples_seen_;
    batch_in_epoch_ += micro;
    samples_seen_ = eval_schedule_->SamplesSeen(epoch_, batch_in_epoch_);
    ++steps_run_;
    if (graphed) {  // the captured update; Finish ran inside the last micro-step's graph
      last_lr_ = schedule_->At(step_);
      last_norm_ = step_graphs_->Update(last_lr_).clone();
    } else {
      if (grad_sync_ != nullptr) RETURN_IF_ERROR(grad_sync_->Finish());
      std::vector<torch::Tensor> grads = DefinedGrads(params_);
      if (precision_ == Precision::kFp16) ScaleGrads(grads, 1.0 / scaler_.scale());
      last_norm_ = TotalGradNorm(grads);
      last_lr_ = schedule_->At(step_);
      bool skip = false;
      if (precision_ == Precision::kFp16) {
        skip = !std::isfinite(last_norm_.item<double>());
        scaler_.Update(skip);
      }
      if (!skip) {
        if (c_.train.max_grad_norm > 0) {
          ClipGradsByTotalNorm(grads, last_norm_, c_.train.max_grad_norm);
        }
        optimizer_->Step(last_lr_);
      }
      // Set to none; under DDP the bucket views are zeroed instead, and graphs keep theirs.
      if (grad_sync_ == nullptr && step_graphs_ == nullptr) {
        for (torch::Tensor& p : params_) p.mutable_grad() = torch::Tensor();
      }
    }
    ++step_;
    Pet();
    if (steps_run_ == 1) {  // waited for here, so that its GPU time is its own
      if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
      summary_.times.first_step += SecondsSince(step_start);
    } else {
      summary_.times.steps += SecondsSince(step_start);
    }
    loss_sum_ = loss_sum_.defined() ? loss_sum_ + loss : loss;
    ++loss_steps_;

    const bool last = step_ == total_steps_;
    const std::optional<int64_t> point =
        last ? std::optional<int64_t>(samples_seen_)
             : eval_schedule_->KeyAt(step_, samples_before, samples_seen_);
    if (point.has_value() || step_ % c_.train.log_every_steps == 0) {
      RETURN_IF_ERROR(EndOfLine(point, last));
      if (summary_.stopped) break;
    }
    if (o_.interrupt_after_steps > 0 && step_ == o_.interrupt_after_steps && !last) {
      return WaitForWriter();
    }
  }
  if (step_graphs_ != nullptr && !quiet_) {
    std::printf("graphs   %lld CUDA graphs captured in %.2f s (recording %.2f s, instantiating "
                "%.2f s; %lld new memory segments)\n",
                static_cast<long long>(step_graphs_->captured()), step_graphs_->capture_seconds(),
                step_graphs_->record_seconds(), step_graphs_->instantiate_seconds(),
                static_cast<long long>(step_graphs_->capture_segments()));
  }
  // Stopped by the pruner: the last line was not the planned last step's.
  if (rank_ == 0 && LastModelWanted() && model_step_ != step_) RETURN_IF_ERROR(StageModel());
  if (model_staged_) RETURN_IF_ERROR(Save(/*checkpoint=*/false));
  return WaitForWriter();
}

absl::Status Run::WaitForWriter() {
  const auto start = Clock::now();
  absl::Status s = writer_.Wait();
  summary_.times.saving += SecondsSince(start);
  return s;
}

absl::StatusOr<double> Run::MeanOverRanks(const torch::Tensor& value) {
  if (group_ == nullptr) return value.item<double>();
  torch::Tensor t = value.detach().to(torch::kDouble).reshape({1});
  if (group_->backend() == comm::ProcessGroup::Backend::kGloo) t = t.to(torch::kCPU);
  RETURN_IF_ERROR(group_->AllReduceSum(t));
  return t.item<double>() / static_cast<double>(world_);
}

absl::StatusOr<bool> Run::AgreeOnStop(bool stop) {
  if (group_ == nullptr) return stop;
  torch::Tensor flag = torch::full({1}, stop ? 1.0 : 0.0, torch::kFloat);
  if (group_->backend() == comm::ProcessGroup::Backend::kNccl) flag = flag.to(device_);
  RETURN_IF_ERROR(group_->Broadcast(flag, 0));
  return flag.item<double>() > 0.5;
}

absl::Status Run::EndOfLine(std::optional<int64_t> point, bool last) {
  const bool evaluate = eval_ != nullptr && point.has_value();
  const auto line_end = Clock::now();
  std::map<std::string, double> values;
  const double seconds = SecondsSince(line_start_);
  values["epoch"] = static_cast<double>(epoch_) +
                    static_cast<double>(batch_in_epoch_) / static_cast<double>(batches_per_epoch_);
  // The loss of the global batch: the mean over ranks (equal batches on every rank).
  ASSIGN_OR_RETURN(const double loss_sum, MeanOverRanks(loss_sum_));
  values["train/loss"] = loss_sum / static_cast<double>(loss_steps_);
  values["train/grad_norm"] = last_norm_.item<double>();
  values["lr"] = last_lr_;
  values["train/samples_per_s"] =
      seconds > 0 ? static_cast<double>(samples_ * world_) / seconds : 0.0;
  if (precision_ == Precision::kFp16) values["train/loss_scale"] = scaler_.scale();
  if (!quiet_) {
    std::printf("step %lld/%lld  samples %lld  epoch %.2f  loss %.5g  grad_norm %.4g  lr %.3g  "
                "%.0f samples/s\n",
                static_cast<long long>(step_), static_cast<long long>(total_steps_),
                static_cast<long long>(samples_seen_), values["epoch"], values["train/loss"],
                values["train/grad_norm"], last_lr_, values["train/samples_per_s"]);
  }
  Pet();
  summary_.times.steps += SecondsSince(line_end);  // the loss read waited for the steps
  if (evaluate) {
    const auto eval_start = Clock::now();
    ASSIGN_OR_RETURN(auto metrics,
                     Evaluate(model_, *eval_, device_, EvalBatchSize(),
                              precision_, group_));
    values.insert(metrics.begin(), metrics.end());
    const double primary = metrics[summary_.primary_metric];
    if (!quiet_) {
      std::printf("eval step %lld at %lld samples:", static_cast<long long>(step_),
                  static_cast<long long>(*point));
      for (const auto& [k, v] : metrics) std::printf("  %s %.5g", k.c_str(), v);
      std::printf("  (%.2f s)\n", SecondsSince(eval_start));
    }
    summary_.times.evaluation += SecondsSince(eval_start);
    if (std::isfinite(primary) && (!std::isfinite(best_) || primary > best_)) {
      best_ = primary;
      best_step_ = step_;
      if (c_.output.save == "best" && rank_ == 0) RETURN_IF_ERROR(StageModel());
    }
  }
  if (last && LastModelWanted() && rank_ == 0) RETURN_IF_ERROR(StageModel());
  std::fflush(stdout);
  Pet();
  summary_.last_metrics = values;
  if (rank_ == 0) {
    const auto log_start = Clock::now();
    RETURN_IF_ERROR(log_.Append(step_, values, samples_seen_));
    summary_.times.reports += SecondsSince(log_start);
    const bool checkpoint =
        c_.output.checkpoint &&
        (last || (evaluate && SecondsSince(last_checkpoint_) >= c_.output.checkpoint_every_s));
    if (checkpoint || (last && model_staged_)) RETURN_IF_ERROR(Save(checkpoint));
  }
  const auto report_start = Clock::now();
  loss_sum_ = torch::Tensor();
  loss_steps_ = 0;
  samples_ = 0;

  if (point.has_value()) RETURN_IF_ERROR(ReportAt(*point, last, values));
  summary_.times.reports += SecondsSince(report_start);
  Pet();
  line_start_ = Clock::now();
  return absl::OkStatus();
}

absl::Status Run::ReportAt(int64_t key, bool last, const std::map<std::string, double>& values) {
  summary_.reports.push_back({step_, key, last});
  const bool reporting = rank_ == 0 && o_.client != nullptr;
  if (last) {
    if (reporting) RETURN_IF_ERROR(o_.client->ReportFinal(step_, key, values));
    return absl::OkStatus();
  }
  // Early stopping is rank-synchronous: rank 0 reports and hears the pruner, every rank learns
  // its decision at this same step, and all leave the loop together.
  bool stop = false;
  if (reporting) {
    ASSIGN_OR_RETURN(stop, o_.client->Report(step_, key, values));
  }
  ASSIGN_OR_RETURN(stop, AgreeOnStop(stop));
  if (stop) {
    TF_LOG(INFO) << "stopped at step " << step_ << " (" << key << " samples) by the pruner";
    summary_.stopped = true;
  }
  return absl::OkStatus();
}

absl::Status Run::StageModel() {
  const auto start = Clock::now();
  RETURN_IF_ERROR(writer_.Wait());  // it may be reading the staged buffers
  staged_encoder_ = model_encoder_.Copy(BertStateDict(model_->bert()));
  staged_head_ = model_head_.Copy(model_->HeadStateDict());
  model_staged_ = true;
  model_step_ = step_;
  summary_.times.saving += SecondsSince(start);
  return absl::OkStatus();
}

absl::Status Run::Save(bool checkpoint) {
  const auto start = Clock::now();
  // The writer may still read the buffers: it finishes first. Then host copies (the training
  // goes on changing the live tensors) and the files on the background thread.
  RETURN_IF_ERROR(writer_.Wait());
  const bool model = model_staged_;
  model_staged_ = false;
  const BertConfig config = model_->bert()->config();
  TrainStateFiles state;
  if (checkpoint) {
    state.config = config;
    if (model && model_step_ == step_) {  // the same weights: copied once
      state.encoder = staged_encoder_;
      state.head = staged_head_;
    } else {
      state.encoder = encoder_copy_.Copy(BertStateDict(model_->bert()));
      state.head = head_copy_.Copy(model_->HeadStateDict());
    }
    state.optimizer = optimizer_copy_.Copy(optimizer_->StateDict());
    TrainProgress& p = state.progress;
    p.step = step_;
    p.epoch = epoch_;
    p.batch_in_epoch = batch_in_epoch_;
    p.best = best_;
    p.best_step = best_step_;
    p.loss_scale = precision_ == Precision::kFp16 ? scaler_.scale() : 0.0;
    p.scaler_good_steps = scaler_.good_steps();
    p.scaler_skipped = scaler_.skipped_steps();
    p.fingerprint = Fingerprint();
    last_checkpoint_ = Clock::now();
  }
  CheckpointSaveOptions options;
  options.source_dir = c_.model.path;
  options.pooling = c_.model.pooling;
  options.max_seq_length = c_.model.max_seq_len;
  using Tensors = HostSnapshot::Tensors;
  const Tensors encoder = model ? staged_encoder_ : Tensors();
  const Tensors head = model ? staged_head_ : Tensors();
  absl::Status started = writer_.Start([model, checkpoint, config, encoder, head, options,
                                        state = std::move(state), dir = c_.output.dir,
                                        source = c_.model.path]() -> absl::Status {
    if (model) {  // first: a checkpoint's best must be on disk with it
      const std::string model_dir = InFolder(dir, "model");
      RETURN_IF_ERROR(SaveBertCheckpoint(model_dir, config, encoder, options));
      if (!head.empty()) {
        RETURN_IF_ERROR(WriteSafetensors(InFolder(model_dir, "head.safetensors"), head));
      }
    }
    if (checkpoint) RETURN_IF_ERROR(SaveTrainState(dir, state, source));
    return absl::OkStatus();
  });
  summary_.times.saving += SecondsSince(start);
  return started;
}

}  // namespace

absl::StatusOr<TrainSummary> RunTraining(const TrainerConfig& config, const TrainOptions& options) {
  Run run(config, options);
  try {
    return run.Go();
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    return absl::InternalError(absl::StrCat("training failed: ", what.substr(0, what.find('\n'))));
  }
}

}  // namespace trainer
}  // namespace tunefleet
