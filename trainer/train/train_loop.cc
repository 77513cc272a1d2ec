#include "trainer/train/train_loop.h"

#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/event_file.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "trainer/distributed/progress_watchdog.h"
#include "trainer/distributed/rank_consensus.h"
#include "trainer/io/metrics_log.h"
#include "trainer/optim/loss_scaler.h"
#include "trainer/tasks/evaluator.h"
#include "trainer/train/batch_sampling.h"
#include "trainer/train/eval_line.h"
#include "trainer/train/eval_schedule.h"
#include "trainer/train/graph_policy.h"
#include "trainer/train/memory_estimate.h"
#include "trainer/train/model_saver.h"
#include "trainer/train/run_output.h"
#include "trainer/train/run_setup.h"
#include "trainer/train/step_graphs.h"
#include "trainer/train/train_feed.h"
#include "trainer/train/train_state.h"
#include "trainer/train/train_step.h"

namespace tunefleet {
namespace trainer {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
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
        quiet_(options.quiet || rank_ != 0),
        consensus_(group_, options.client, device_),
        saver_(config) {}

  // The run; any LibTorch error, wherever it is thrown (the model's set-up, a step, an
  // evaluation), ends it with a status: ResourceExhausted (exit code 3) when memory ran out.
  absl::StatusOr<TrainSummary> Go() {
    absl::StatusOr<TrainSummary> result = GoCaught();
    if (events_ != nullptr && session_started_) {
      // The HParams view's status; a failure to write it does not change the run's outcome.
      events_->WriteSessionEnd(result.ok(), WallSeconds()).IgnoreError();
    }
    return result;
  }

 private:
  absl::StatusOr<TrainSummary> GoCaught() {
    try {
      return GoUnchecked();
    } catch (const c10::Error& e) {
      const std::string what = e.what_without_backtrace();
      if (IsOutOfMemory(e)) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "out of memory at train.batch_size %d (estimate %.2f GiB): lower the batch size or "
            "set train.grad_checkpointing: true (%s)",
            c_.train.batch_size, GiB(summary_.estimate_bytes), FirstLine(what)));
      }
      return absl::InternalError(absl::StrCat(
          "training failed ", looping_ ? absl::StrCat("at step ", step_ + 1) : "in its set-up",
          ": ", FirstLine(what)));
    }
  }

  absl::StatusOr<TrainSummary> GoUnchecked() {
    graphs_note_ = WhyNoCudaGraphs(c_.train, device_.is_cuda(), StepGraphs::Available());
    // CUDA graphs: the whole run on a side stream, the model and the gradient hooks included
    // (trainer/train/step_graphs.h).
    std::optional<SideStreamScope> side;
    if (graphs_note_.empty()) side.emplace(device_);
    const auto setup_start = Clock::now();
    RETURN_IF_ERROR(Setup());
    summary_.times.setup = SecondsSince(setup_start);
    const auto start = Clock::now();
    looping_ = true;
    loop_start_ = start;
    loop_first_step_ = step_;  // after a resume, the steps already done
    RETURN_IF_ERROR(Loop());
    summary_.seconds = SecondsSince(start);
    summary_.steps = step_;
    summary_.samples = samples_seen_;
    summary_.best = best_;
    summary_.best_step = best_step_;
    summary_.peak_bytes = PeakMemoryBytes(device_);
    summary_.optimizer_state_bytes = train_step_->optimizer_state_bytes();
    summary_.optimizer_state_unsharded_bytes = train_step_->unsharded_optimizer_state_bytes();
    summary_.optimizer_shards = train_step_->sharded() ? world_ : 1;
    if (const StepGraphs* graphs = train_step_->graphs(); graphs != nullptr) {
      summary_.cuda_graphs = graphs->captured();
      summary_.times.captures = graphs->capture_seconds();
    }
    summary_.times.saving = saver_.seconds();
    return summary_;
  }

  absl::Status Setup();
  // Everything of Setup() after the model is built: the device, data parallelism, the
  // optimizer (resumed), graphs and the metrics log.
  absl::Status PrepareTraining(const TrainStateFiles* resumed);
  void PrintSetup(const MemoryEstimate& estimate) const;
  absl::Status Loop();
  // train.eval_batch_size, or the default for the device (measured: docs/BENCHMARKS.md).
  int64_t EvalBatchSize() const {
    if (c_.train.eval_batch_size > 0) return c_.train.eval_batch_size;
    return std::max<int64_t>(c_.train.batch_size, device_.is_cuda() ? 256 : 64);
  }
  // Writes the line of step_ (evaluating first when `point` and there is eval data) and
  // reports it when `point`: the key of an evaluation point (the last step's: samples_seen_),
  // or nullopt for a plain log line.
  absl::Status EndOfLine(std::optional<int64_t> point, bool last);
  // Evaluates the model at step_ into `values`; a better primary metric becomes the best (and
  // the staged model under output.save best).
  absl::Status EvaluateAt(int64_t key, std::map<std::string, double>& values);
  // Reports the evaluation point of step_ under `key` (the final report when `last`) to the
  // agent (rank 0, when there is one) and records it in the summary; on a stop decision, which
  // every rank learns here, sets summary_.stopped.
  absl::Status ReportAt(int64_t key, bool last, const std::map<std::string, double>& values);
  // The resumable progress after step_ (its checkpoint's trainer_state.json).
  TrainProgress Progress() const;
  // Whether the run ends by writing the model: output.save last, or best with nothing to judge.
  bool LastModelWanted() const {
    return c_.output.save == "last" || (c_.output.save == "best" && p_.eval == nullptr);
  }
  std::string Fingerprint() const {
    return RunFingerprint(c_, world_, p_.total_steps, NoDuplicateBatches(c_.train, *p_.task));
  }
  // Padding to multiples of 8 on GPUs (aligned tensor-core shapes, few distinct shapes).
  int64_t pad_multiple() const { return device_.is_cuda() ? 8 : 1; }
  bool several() const { return p_.datasets.size() > 1; }
  // The step's loss into the line's sums; several datasets: also its dataset's, which become
  // train/loss/NAME (a mean over ranks) in DatasetLosses.
  void AddLoss(const torch::Tensor& loss, int dataset);
  absl::Status DatasetLosses(std::map<std::string, double>& values);
  void Pet() {
    if (watchdog_ != nullptr) watchdog_->Pet();
  }

  const TrainerConfig& c_;
  const TrainOptions& o_;
  torch::Device device_;
  comm::ProcessGroup* group_;  // null for one process
  int rank_;
  int world_;
  bool quiet_;
  RankConsensus consensus_;
  RunParts p_;
  std::string graphs_note_;  // why the steps run eagerly, or "" for CUDA graphs
  std::unique_ptr<TrainStep> train_step_;
  std::unique_ptr<ProgressWatchdog> watchdog_;  // data parallel only
  MetricsLog log_;
  std::unique_ptr<EventFileWriter> events_;  // rank 0
  bool session_started_ = false;
  bool looping_ = false;          // Setup() is done and the steps have begun
  Clock::time_point loop_start_;  // for the ETA in the step lines
  int64_t loop_first_step_ = 0;

  int64_t step_ = 0;
  std::unique_ptr<TrainFeed> feed_;  // the batches of the steps
  int dataset_ = 0;                  // the dataset of step_
  int64_t samples_seen_ = 0;         // after step_: feed_->SamplesSeen()

  // Since the last line.
  torch::Tensor loss_sum_;  // on the device, summed over steps
  int64_t loss_steps_ = 0;
  std::map<int, std::pair<torch::Tensor, int64_t>> dataset_loss_;  // several: sum and steps
  int64_t samples_ = 0;
  Clock::time_point line_start_;
  double last_lr_ = 0;

  double best_ = kNaN;
  int64_t best_step_ = -1;
  TrainSummary summary_;
  ModelSaver saver_;  // last: destroyed (its write waited for) first
};

absl::Status Run::Setup() {
  ASSIGN_OR_RETURN(p_, BuildRunParts(c_, device_, rank_, world_));
  summary_.times.setup_model = p_.model_seconds;
  summary_.times.setup_data = p_.data_seconds;
  summary_.total_steps = p_.total_steps;
  summary_.primary_metric = PrimaryMetric(p_.task->evaluation());
  if (graphs_note_.empty()) graphs_note_ = WhyNoCudaGraphsForData(p_.datasets);
  if (absl::Status s = MakeDirs(c_.output.dir); !s.ok()) {
    return absl::PermissionDeniedError(absl::StrCat("output.dir: ", s.message()));
  }
  std::optional<TrainStateFiles> resumed;
  int64_t epoch = 0, position = 0;
  if (o_.resume) {
    ASSIGN_OR_RETURN(resumed, LoadResumeState(c_, Fingerprint(), p_.model));
    const TrainProgress& progress = resumed->progress;
    step_ = progress.step;
    epoch = progress.epoch;
    position = progress.batch_in_epoch;
    best_ = progress.best;
    best_step_ = progress.best_step;
    torch::manual_seed(static_cast<uint64_t>(c_.train.seed + step_));
  }
  feed_ = std::make_unique<TrainFeed>(c_.train, p_.datasets, p_.shape, p_.max_len, rank_, world_,
                                      pad_multiple(), graphs_note_.empty(), quiet_);
  feed_->Start(epoch, position);
  samples_seen_ = feed_->SamplesSeen();
  return PrepareTraining(resumed ? &*resumed : nullptr);
}

absl::Status Run::PrepareTraining(const TrainStateFiles* resumed) {
  p_.model->to(device_);
  p_.model->train();
  p_.model->set_process_group(group_);
  for (const TrainSet& set : p_.datasets) {  // gradient sync waits for a multi-pass backward
    if (set.task->multi_pass_backward()) p_.model->set_task(set.task);
  }
  train_step_ = std::make_unique<TrainStep>(c_.train, device_, p_.precision, p_.model, group_,
                                            graphs_note_, quiet_);
  RETURN_IF_ERROR(train_step_->Init());
  if (resumed != nullptr) {
    LossScaler& scaler = train_step_->scaler();
    const TrainProgress& progress = resumed->progress;
    scaler.Restore(progress.loss_scale > 0 ? progress.loss_scale : scaler.scale(),
                   progress.scaler_good_steps, progress.scaler_skipped);
    absl::Status s = train_step_->LoadOptimizerState(resumed->optimizer);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(c_.output.dir, "/checkpoint: ", s.message()));
    }
  }
  if (rank_ == 0) {
    RETURN_IF_ERROR(log_.Open(JoinPath(c_.output.dir, "metrics.jsonl"), o_.resume ? step_ : -1));
    ASSIGN_OR_RETURN(events_, OpenRunEvents(c_.output.dir, &session_started_));
  }
  const auto [rows, passes] = StepActivations(p_.datasets, c_.train.batch_size);
  RETURN_IF_ERROR(CheckBatchCanFit(p_.model->bert()->config(), train_step_->num_parameters(), rows,
                                   passes, p_.precision, c_.train.grad_checkpointing,
                                   train_step_->sharded() ? world_ : 1, device_));
  const MemoryEstimate estimate = EstimateTrainingMemory(
      p_.model->bert()->config(), train_step_->num_parameters(), rows, p_.max_len, passes,
      p_.precision, c_.train.grad_checkpointing, train_step_->sharded() ? world_ : 1);
  summary_.estimate_bytes = estimate.total_bytes();
  if (!quiet_) PrintSetup(estimate);
  ResetPeakMemory(device_);
  return absl::OkStatus();
}

void Run::PrintSetup(const MemoryEstimate& estimate) const {
  RunSetupFacts f;
  for (const TrainSet& set : p_.datasets) f.train_examples += set.data->size();
  f.eval_examples = p_.eval ? p_.eval->size() : -1;
  f.total_steps = p_.total_steps;
  f.steps_per_epoch = p_.steps_per_epoch;
  f.resumed_after = o_.resume ? step_ : -1;
  f.memory = estimate.Describe();
  f.optimizer = train_step_->optimizer_implementation();
  f.schedule = c_.train.schedule;
  f.warmup_steps = p_.schedule->warmup_steps();
  const TrainSet& first = p_.datasets.front();
  f.batches = DescribeRunBatches(c_.train, *first.task, feed_->options(0), first.data->size());
  if (several()) f.datasets = DescribeDatasets(p_.datasets, p_.shape, c_.train);
  f.cuda = device_.is_cuda();
  f.graphs_note = graphs_note_;
  f.zero1 = c_.train.strategy == "zero1";
  if (group_ != nullptr) {
    f.world = world_;
    f.sharded = train_step_->sharded();
    f.backend = comm::ProcessGroup::BackendName(group_->backend());
    f.batch_size = c_.train.batch_size;
    f.grad_accum = c_.train.grad_accum;
    f.buckets = train_step_->grad_sync()->num_buckets();
    f.bucket_mb = c_.train.ddp_bucket_mb;
    f.bf16_buckets = c_.train.ddp_comm_dtype == "bf16" &&
                     group_->backend() == comm::ProcessGroup::Backend::kNccl;
  }
  PrintRunSetup(f);
}

absl::Status Run::Loop() {
  if (group_ != nullptr) watchdog_ = MakePeerWatchdog(rank_, c_.train.ddp_timeout_s);
  line_start_ = Clock::now();
  saver_.StartCheckpointClock();
  while (step_ < p_.total_steps) {
    const auto step_start = Clock::now();
    const TrainFeed::Step next = feed_->Next();
    dataset_ = next.dataset;
    if (several()) p_.model->set_task(p_.datasets[static_cast<size_t>(dataset_)].task);
    last_lr_ = p_.schedule->At(step_);
    const auto batch = [this](int64_t m) { return feed_->MicroBatch(m, &samples_); };
    ASSIGN_OR_RETURN(const torch::Tensor loss, train_step_->Run(next.micro, batch, last_lr_));
    const int64_t samples_before = samples_seen_;
    feed_->Advance();
    samples_seen_ = feed_->SamplesSeen();
    ++step_;
    Pet();
    if (train_step_->steps_run() == 1) {  // waited for here, so that its GPU time is its own
      if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
      summary_.times.first_step += SecondsSince(step_start);
    } else {
      summary_.times.steps += SecondsSince(step_start);
    }
    AddLoss(loss, dataset_);

    const bool last = step_ == p_.total_steps;
    const std::optional<int64_t> point =
        last ? std::optional<int64_t>(samples_seen_)
             : p_.eval_schedule->KeyAt(step_, samples_before, samples_seen_);
    if (point.has_value() || step_ % c_.train.log_every_steps == 0) {
      RETURN_IF_ERROR(EndOfLine(point, last));
      if (summary_.stopped) break;
    }
    if (o_.interrupt_after_steps > 0 && step_ == o_.interrupt_after_steps && !last) {
      return saver_.Wait();
    }
  }
  if (const StepGraphs* graphs = train_step_->graphs(); graphs != nullptr && !quiet_) {
    std::printf(
        "graphs   %lld CUDA graphs captured in %.2f s (recording %.2f s, instantiating "
        "%.2f s, first replays %.2f s; %lld new memory segments)\n",
        static_cast<long long>(graphs->captured()), graphs->capture_seconds(),
        graphs->record_seconds(), graphs->instantiate_seconds(), graphs->upload_seconds(),
        static_cast<long long>(graphs->capture_segments()));
  }
  // Stopped by the pruner: the last line was not the planned last step's.
  if (rank_ == 0 && LastModelWanted() && saver_.staged_step() != step_) {
    RETURN_IF_ERROR(saver_.Stage(p_.model, step_));
  }
  if (saver_.staged()) RETURN_IF_ERROR(saver_.Save(p_.model, {}, std::nullopt));
  return saver_.Wait();
}

absl::Status Run::EndOfLine(std::optional<int64_t> point, bool last) {
  const bool evaluate = p_.eval != nullptr && point.has_value();
  const auto line_end = Clock::now();
  std::map<std::string, double> values;
  values["epoch"] = feed_->EpochProgress();
  // The loss of the global batch: the mean over ranks (equal batches on every rank). Reading it
  // waits for the device to finish the line's steps (with CUDA graphs the host queues steps
  // ahead of the GPU), so the time read after it is the line's time on the device.
  ASSIGN_OR_RETURN(const double loss_sum, consensus_.Mean(loss_sum_));
  const double seconds = SecondsSince(line_start_);
  values["train/loss"] = loss_sum / static_cast<double>(loss_steps_);
  RETURN_IF_ERROR(DatasetLosses(values));
  values["train/grad_norm"] = train_step_->last_norm().item<double>();
  values["lr"] = last_lr_;
  values["train/samples_per_s"] =
      seconds > 0 ? static_cast<double>(samples_ * world_) / seconds : 0.0;
  if (p_.precision == Precision::kFp16) values["train/loss_scale"] = train_step_->scaler().scale();
  if (!quiet_) {
    std::printf(
        "step %lld/%lld  samples %lld  epoch %.2f  loss %.5g  grad_norm %.4g  lr %.3g  "
        "%.0f samples/s%s%s\n",
        static_cast<long long>(step_), static_cast<long long>(p_.total_steps),
        static_cast<long long>(samples_seen_), values["epoch"], values["train/loss"],
        values["train/grad_norm"], last_lr_, values["train/samples_per_s"],
        EtaText(SecondsSince(loop_start_), step_ - loop_first_step_, p_.total_steps - step_)
            .c_str(),
        several() ? absl::StrCat("  dataset=", p_.datasets[dataset_].name).c_str() : "");
    std::fflush(stdout);  // seen now, not after the evaluation that may follow
  }
  Pet();
  summary_.times.steps += SecondsSince(line_end);  // the loss read waited for the steps
  if (evaluate) RETURN_IF_ERROR(EvaluateAt(*point, values));
  if (last && LastModelWanted() && rank_ == 0) RETURN_IF_ERROR(saver_.Stage(p_.model, step_));
  std::fflush(stdout);
  Pet();
  summary_.last_metrics = values;
  // Rank 0's clock decides when to checkpoint; under zero1 every rank then gathers its part of
  // the optimizer state.
  bool checkpoint =
      c_.output.checkpoint &&
      (last || (evaluate && saver_.SecondsSinceCheckpoint() >= c_.output.checkpoint_every_s));
  if (train_step_->sharded() && c_.output.checkpoint && evaluate && !last) {
    ASSIGN_OR_RETURN(checkpoint, consensus_.RankZeroDecides(checkpoint));
  }
  std::map<std::string, torch::Tensor> optimizer_state;
  if (checkpoint && (rank_ == 0 || train_step_->sharded())) {
    ASSIGN_OR_RETURN(optimizer_state, train_step_->OptimizerState());
  }
  if (rank_ == 0) {
    const auto log_start = Clock::now();
    RETURN_IF_ERROR(log_.Append(step_, values, samples_seen_));
    std::map<std::string, double> scalars = values;  // every metrics.jsonl key but the step
    scalars["samples"] = static_cast<double>(samples_seen_);
    RETURN_IF_ERROR(events_->WriteScalars(step_, scalars, WallSeconds()));
    summary_.times.reports += SecondsSince(log_start);
    if (checkpoint || (last && saver_.staged())) {
      RETURN_IF_ERROR(
          saver_.Save(p_.model, optimizer_state,
                      checkpoint ? std::optional<TrainProgress>(Progress()) : std::nullopt));
    }
  }
  const auto report_start = Clock::now();
  loss_sum_ = torch::Tensor();
  loss_steps_ = 0;
  dataset_loss_.clear();
  samples_ = 0;

  if (point.has_value()) RETURN_IF_ERROR(ReportAt(*point, last, values));
  summary_.times.reports += SecondsSince(report_start);
  Pet();
  line_start_ = Clock::now();
  return absl::OkStatus();
}

absl::Status Run::EvaluateAt(int64_t key, std::map<std::string, double>& values) {
  const auto eval_start = Clock::now();
  if (several()) p_.model->set_task(p_.task);  // the evaluation's
  ASSIGN_OR_RETURN(auto metrics, Evaluate(p_.model, *p_.eval, device_, EvalBatchSize(),
                                          p_.precision, group_, c_.task.matryoshka_dims));
  values.insert(metrics.begin(), metrics.end());
  const double primary = metrics[summary_.primary_metric];
  const std::string line =
      EvalLine(step_, key, metrics, summary_.primary_metric, SecondsSince(eval_start));
  if (!quiet_) std::printf("%s\n", line.c_str());
  summary_.times.evaluation += SecondsSince(eval_start);
  if (std::isfinite(primary) && (!std::isfinite(best_) || primary > best_)) {
    best_ = primary;
    best_step_ = step_;
    if (c_.output.save == "best" && rank_ == 0) RETURN_IF_ERROR(saver_.Stage(p_.model, step_));
  }
  return absl::OkStatus();
}

absl::Status Run::ReportAt(int64_t key, bool last, const std::map<std::string, double>& values) {
  summary_.reports.push_back({step_, key, last});
  ASSIGN_OR_RETURN(const bool stop, consensus_.ReportPoint(step_, key, last, values));
  if (stop) summary_.stopped = true;
  return absl::OkStatus();
}

void Run::AddLoss(const torch::Tensor& loss, int dataset) {
  loss_sum_ = loss_sum_.defined() ? loss_sum_ + loss : loss;
  ++loss_steps_;
  if (!several()) return;
  auto& [sum, steps] = dataset_loss_[dataset];
  sum = sum.defined() ? sum + loss : loss;
  ++steps;
}

absl::Status Run::DatasetLosses(std::map<std::string, double>& values) {
  for (const auto& [dataset, sum_steps] : dataset_loss_) {
    ASSIGN_OR_RETURN(const double sum, consensus_.Mean(sum_steps.first));
    values[absl::StrCat("train/loss/", p_.datasets[static_cast<size_t>(dataset)].name)] =
        sum / static_cast<double>(sum_steps.second);
  }
  return absl::OkStatus();
}

TrainProgress Run::Progress() const {
  const LossScaler& scaler = train_step_->scaler();
  return TrainProgress{step_,
                       feed_->epoch(),
                       feed_->position(),
                       best_,
                       best_step_,
                       /*loss_scale=*/p_.precision == Precision::kFp16 ? scaler.scale() : 0.0,
                       scaler.good_steps(),
                       scaler.skipped_steps(),
                       Fingerprint()};
}

}  // namespace

absl::StatusOr<TrainSummary> RunTraining(const TrainerConfig& config, const TrainOptions& options) {
  Run run(config, options);
  return run.Go();
}

}  // namespace trainer
}  // namespace tunefleet
