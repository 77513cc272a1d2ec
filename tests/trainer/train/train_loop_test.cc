// trainer/train/train_loop.h beyond the golden trajectories (train_trajectory_test):
//   - resume: a run interrupted after a checkpoint and resumed (--resume) ends with the same
//     metrics.jsonl and the same weights, bit for bit, as the run that was never interrupted
//     (fp32, dropout 0, shuffled epochs, gradient accumulation, a linear schedule with warm-up);
//     resuming with another batch size is refused, naming the checkpoint;
//   - checkpoints at most every output.checkpoint_every_s, and at the end;
//   - evaluation lines and the best model: eval/spearman at every eval_every_steps and at the
//     end, the saved model holds the best step's weights; the time line's phases add up;
//   - evaluation points and their keys (train_loop.h): every line's "samples"; the points
//     reported (TrainSummary::reports, what an agent gets) for eval_every_steps,
//     eval_every_epochs (the 640-pair acceptance example at batch 16 and 128) and
//     eval_every_samples (a step crossing two targets; without eval data the lines' training
//     metrics at the same points); a resumed run evaluates and keys as the uninterrupted one;
//   - bad input: a missing data file, an empty one, rows lacking columns, a head file of the
//     wrong shape, fp16 on the CPU: each a clear error naming the file, never a crash.
#include <cmath>
#include <fstream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/trainer/testing/trainer_test_util.h"
#include "trainer/data/datasets.h"
#include "trainer/data/task_data.h"
#include "trainer/data/wordpiece_tokenizer.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/hf_model_folder.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/loss_registry.h"
#include "trainer/tasks/task_model.h"
#include "trainer/train/train_loop.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;
using Point = TrainSummary::ReportPoint;
using StepSamples = std::vector<std::pair<int64_t, int64_t>>;

// A fresh folder each time: a test run never sees an earlier run's files.
std::string TempDir(const std::string& name) { return FreshTestDir("train-loop-" + name); }

// STS-B on bert-tiny-random: 640 training rows (a slice written to a temp file), dev 200 rows.
TrainerConfig SmallSts(const std::string& out) {
  static const std::string train =
      FirstLines("data/stsbenchmark/sts-train.csv", 640, "train-loop-sts-train-640.csv");
  static const std::string dev =
      FirstLines("data/stsbenchmark/sts-dev.csv", 200, "train-loop-sts-dev-200.csv");
  TrainerConfig c = TinyStsConfig(train, dev);
  c.train.epochs = 2;  // 20 steps an epoch (batch 16, grad_accum 2), 40 in all
  c.train.warmup_ratio = 0.1;
  c.train.eval_every_steps = 15;
  c.train.log_every_steps = 5;
  c.output.dir = out;
  c.output.save = "best";
  c.output.checkpoint_every_s = 0;  // a checkpoint at every evaluation
  return c;
}

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// metrics.jsonl lines without their timing (train/samples_per_s), which differs run to run.
std::vector<std::string> WithoutTiming(std::vector<std::string> lines) {
  for (std::string& l : lines) {
    Json j = Json::parse(l);
    j.erase("train/samples_per_s");
    l = j.dump();
  }
  return lines;
}

// (step, samples) of metrics.jsonl's lines, of those with eval/spearman when `evals_only`.
StepSamples LineSamples(const std::string& dir, bool evals_only) {
  StepSamples out;
  for (const std::string& line : Lines(dir + "/metrics.jsonl")) {
    const Json j = Json::parse(line);
    EXPECT_TRUE(j.contains("samples") && j["samples"].is_number_integer()) << line;
    if (evals_only && !j.contains("eval/spearman")) continue;
    out.emplace_back(j["step"].get<int64_t>(), j.value("samples", int64_t{-1}));
  }
  return out;
}

// The intermediate points (step, key) then the final one.
std::vector<Point> Reports(StepSamples intermediate, int64_t final_step, int64_t final_samples) {
  std::vector<Point> out;
  for (const auto& [step, key] : intermediate) out.push_back({step, key, false});
  out.push_back({final_step, final_samples, true});
  return out;
}

}  // namespace

// Printed by gtest on a mismatch.
void PrintTo(const TrainSummary::ReportPoint& p, std::ostream* os) {
  *os << "{step " << p.step << ", samples " << p.samples << (p.final ? ", final}" : "}");
}

namespace {

TEST(TrainLoop, ResumedRunEqualsUninterruptedRun) {
  TrainOptions quiet;
  quiet.quiet = true;
  const TrainerConfig straight = SmallSts(TempDir("straight"));
  auto a = RunTraining(straight, quiet);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->steps, 40);

  const TrainerConfig broken = SmallSts(TempDir("broken"));
  TrainOptions interrupted = quiet;
  interrupted.interrupt_after_steps = 33;  // the last checkpoint was at step 30
  auto b1 = RunTraining(broken, interrupted);
  ASSERT_TRUE(b1.ok()) << b1.status();
  TrainOptions resume = quiet;
  resume.resume = true;
  auto b2 = RunTraining(broken, resume);
  ASSERT_TRUE(b2.ok()) << b2.status();
  EXPECT_EQ(b2->steps, 40);

  // Metrics: the same lines, but for the timing.
  const auto la = WithoutTiming(Lines(straight.output.dir + "/metrics.jsonl"));
  const auto lb = WithoutTiming(Lines(broken.output.dir + "/metrics.jsonl"));
  EXPECT_EQ(la, lb);
  EXPECT_EQ(la.size(), 8u);  // every 5 steps; the evaluations (15, 30, 40) fall on them

  auto wa = LoadBertCheckpoint(straight.output.dir + "/checkpoint");
  auto wb = LoadBertCheckpoint(broken.output.dir + "/checkpoint");
  ASSERT_TRUE(wa.ok() && wb.ok());
  for (const auto& [name, t] : wa->tensors) {
    EXPECT_TRUE(torch::equal(t, wb->tensors.at(name))) << name;
  }
}

// lr 1e-2 overshoots: the best evaluation comes before the last.
TrainerConfig OvershootingSts(const std::string& out) {
  TrainerConfig c = SmallSts(out);
  c.train.lr = 1e-2;
  return c;
}

TEST(TrainLoop, EvaluatesOnScheduleAndKeepsTheBestModel) {
  const TrainerConfig c = OvershootingSts(TempDir("evals"));
  TrainOptions quiet;
  quiet.quiet = true;
  auto s = RunTraining(c, quiet);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<int64_t> eval_steps;
  double best = -2;
  int64_t best_step = -1;
  for (const std::string& line : Lines(c.output.dir + "/metrics.jsonl")) {
    const Json j = Json::parse(line);
    ASSERT_TRUE(j.contains("train/loss") && j.contains("lr") && j.contains("step"));
    if (j.contains("eval/spearman")) {
      eval_steps.push_back(j["step"].get<int64_t>());
      if (j["eval/spearman"].get<double>() > best) {
        best = j["eval/spearman"].get<double>();
        best_step = j["step"].get<int64_t>();
      }
    }
  }
  EXPECT_EQ(eval_steps, (std::vector<int64_t>{15, 30, 40}));
  // eval_every_steps: keyed by samples_seen, 32 a step (batch 16 x grad_accum 2; 20 steps make
  // the 640-pair epoch), on every line.
  for (const auto& [step, samples] : LineSamples(c.output.dir, /*evals_only=*/false)) {
    EXPECT_EQ(samples, step * 32) << "step " << step;
  }
  EXPECT_EQ(s->reports, Reports({{15, 480}, {30, 960}}, 40, 1280));
  EXPECT_EQ(s->samples, 1280);
  EXPECT_EQ(s->best_step, best_step);
  EXPECT_NEAR(s->best, best, 1e-8);  // metrics.jsonl keeps 9 digits
  // The saved model is the best one: it differs from the last checkpoint unless best is last.
  auto model = LoadBertCheckpoint(c.output.dir + "/model");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->pooling, "mean");
  // The model holds the weights of the best step, bit for bit (written in the background while
  // the training went on): the checkpoint of a run stopped at that step holds the same.
  const TrainerConfig until_best = OvershootingSts(TempDir("until-best"));
  TrainOptions stop_at_best = quiet;
  ASSERT_LT(best_step, 40);  // (lr 1e-2: the last evaluation is not the best)
  stop_at_best.interrupt_after_steps = best_step;
  ASSERT_TRUE(RunTraining(until_best, stop_at_best).ok());
  auto at_best = LoadBertCheckpoint(until_best.output.dir + "/checkpoint");
  ASSERT_TRUE(at_best.ok()) << at_best.status();
  ASSERT_EQ(model->tensors.size(), at_best->tensors.size());
  for (const auto& [name, t] : at_best->tensors) {
    EXPECT_TRUE(torch::equal(model->tensors.at(name), t)) << name;
  }

  // Where the time went: every phase was timed, and the phases make up the loop's time.
  const TrainSummary::Times& t = s->times;
  EXPECT_GT(t.setup_model, 0);
  EXPECT_GT(t.setup_data, 0);
  EXPECT_GE(t.setup, t.setup_model + t.setup_data);
  EXPECT_GT(t.first_step, 0);
  EXPECT_GT(t.steps, 0);
  EXPECT_EQ(t.captures, 0);  // no graphs on the CPU
  EXPECT_GT(t.evaluation, 0);
  EXPECT_GT(t.saving, 0);   // output.save: best, output.checkpoint
  EXPECT_GT(t.reports, 0);  // metrics.jsonl
  const double phases = t.first_step + t.steps + t.evaluation + t.saving + t.reports;
  EXPECT_LE(phases, s->seconds + 1e-3);
  EXPECT_GE(phases, 0.8 * s->seconds);
}

TEST(TrainLoop, CheckpointsNoMoreOftenThanCheckpointEverySeconds) {
  TrainOptions quiet;
  quiet.quiet = true;
  TrainerConfig c = SmallSts(TempDir("cadence"));
  c.output.checkpoint_every_s = 3600;
  TrainOptions interrupted = quiet;
  interrupted.interrupt_after_steps = 33;  // past evaluations at 15 and 30, within the hour
  ASSERT_TRUE(RunTraining(c, interrupted).ok());
  EXPECT_FALSE(PathExists(c.output.dir + "/checkpoint"));
  EXPECT_EQ(Lines(c.output.dir + "/metrics.jsonl").size(), 6u);  // the lines up to step 30

  // To the end: one checkpoint, the last step's, and the best model beside it.
  ASSERT_TRUE(RunTraining(c, quiet).ok());
  std::ifstream in(c.output.dir + "/checkpoint/trainer_state.json");
  ASSERT_TRUE(in.good());
  EXPECT_EQ(Json::parse(in)["step"].get<int64_t>(), 40);
  EXPECT_TRUE(PathExists(c.output.dir + "/model/model.safetensors"));
}

TEST(TrainLoop, RefusesToResumeAnotherRun) {
  TrainerConfig c = SmallSts(TempDir("refuse"));
  TrainOptions quiet;
  quiet.quiet = true;
  quiet.interrupt_after_steps = 16;
  ASSERT_TRUE(RunTraining(c, quiet).ok());
  c.train.batch_size = 32;
  TrainOptions resume;
  resume.quiet = true;
  resume.resume = true;
  auto s = RunTraining(c, resume);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.status().message(), "cannot resume from")) << s.status();
  EXPECT_TRUE(absl::StrContains(s.status().message(), "batch 16")) << s.status();

  TrainerConfig fresh = SmallSts(TempDir("nothing-to-resume"));
  auto none = RunTraining(fresh, resume);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(), "no checkpoint")) << none.status();
}

// SmallSts for one epoch at `batch` (grad_accum 1), evaluated every `epochs` of an epoch or
// every `samples` samples; lines only at evaluation points (and at the end); no files but
// metrics.jsonl.
TrainerConfig Cadenced(const std::string& out, int64_t batch, double epochs, int64_t samples) {
  TrainerConfig c = SmallSts(out);
  c.train.epochs = 1;
  c.train.batch_size = batch;
  c.train.grad_accum = 1;
  c.train.eval_every_steps = 0;
  c.train.eval_every_epochs = epochs;
  c.train.eval_every_samples = samples;
  c.train.log_every_steps = 1000;
  c.output.save = "none";
  c.output.checkpoint = false;
  return c;
}

absl::StatusOr<TrainSummary> Quietly(const TrainerConfig& c) {
  TrainOptions quiet;
  quiet.quiet = true;
  return RunTraining(c, quiet);
}

// The product's acceptance example: 640 pairs, one epoch, one rank, every 1/8 epoch.
TEST(TrainLoop, EvaluatesEveryEighthEpochAtAnyBatchSize) {
  const TrainerConfig b16 = Cadenced(TempDir("eighths-16"), 16, 0.125, 0);
  auto s16 = Quietly(b16);
  ASSERT_TRUE(s16.ok()) << s16.status();
  EXPECT_EQ(s16->steps, 40);
  EXPECT_EQ(s16->samples, 640);
  EXPECT_EQ(
      LineSamples(b16.output.dir, /*evals_only=*/true),
      (StepSamples{
          {5, 80}, {10, 160}, {15, 240}, {20, 320}, {25, 400}, {30, 480}, {35, 560}, {40, 640}}));
  EXPECT_EQ(s16->reports,
            Reports({{5, 80}, {10, 160}, {15, 240}, {20, 320}, {25, 400}, {30, 480}, {35, 560}}, 40,
                    640));

  // Batch 128: 5 steps, each crossing a target; keyed by the largest target reached.
  const TrainerConfig b128 = Cadenced(TempDir("eighths-128"), 128, 0.125, 0);
  auto s128 = Quietly(b128);
  ASSERT_TRUE(s128.ok()) << s128.status();
  EXPECT_EQ(s128->steps, 5);
  EXPECT_EQ(LineSamples(b128.output.dir, /*evals_only=*/true),
            (StepSamples{{1, 128}, {2, 256}, {3, 384}, {4, 512}, {5, 640}}));
  EXPECT_EQ(s128->reports, Reports({{1, 80}, {2, 240}, {3, 320}, {4, 480}}, 5, 640));
}

TEST(TrainLoop, EverySamplesCrossingTwoTargetsEvaluatesOnce) {
  // Batch 128, every 100 samples: step 4 (384 -> 512) crosses 400 and 500.
  const TrainerConfig c = Cadenced(TempDir("every-100"), 128, 0, 100);
  auto s = Quietly(c);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(LineSamples(c.output.dir, /*evals_only=*/true),
            (StepSamples{{1, 128}, {2, 256}, {3, 384}, {4, 512}, {5, 640}}));
  EXPECT_EQ(s->reports, Reports({{1, 100}, {2, 200}, {3, 300}, {4, 500}}, 5, 640));

  // No eval data: the same cadence, the lines' training metrics reported. Batch 64 (64 samples
  // a step): points at steps 2, 4, 5, 7, 8 and the last, 10, and lines there alone.
  TrainerConfig plain = Cadenced(TempDir("every-100-no-eval"), 64, 0, 100);
  plain.task.eval = "";
  auto p = Quietly(plain);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->reports, Reports({{2, 100}, {4, 200}, {5, 300}, {7, 400}, {8, 500}}, 10, 640));
  EXPECT_EQ(LineSamples(plain.output.dir, /*evals_only=*/false),
            (StepSamples{{2, 128}, {4, 256}, {5, 320}, {7, 448}, {8, 512}, {10, 640}}));
  EXPECT_EQ(LineSamples(plain.output.dir, /*evals_only=*/true), StepSamples{});
}

// Resume between targets, past an epoch boundary: the resumed run evaluates at the same steps
// under the same keys, and writes the same lines, as the run never interrupted.
TEST(TrainLoop, ResumedRunKeepsTheEvaluationPointsAndKeys) {
  // Batch 48 on 640 pairs: 14 steps an epoch (the last of 16 pairs), 2 epochs; f = 0.3 of 640:
  // targets 192, 384, 576, 768, 960, 1152.
  auto config = [](const std::string& out) {
    TrainerConfig c = SmallSts(out);
    c.train.batch_size = 48;
    c.train.grad_accum = 1;
    c.train.eval_every_steps = 0;
    c.train.eval_every_epochs = 0.3;
    c.train.log_every_steps = 5;
    return c;
  };
  const TrainerConfig straight = config(TempDir("resume-epochs-straight"));
  auto a = Quietly(straight);
  ASSERT_TRUE(a.ok()) << a.status();
  const std::vector<Point> want =
      Reports({{4, 192}, {8, 384}, {12, 576}, {17, 768}, {21, 960}, {25, 1152}}, 28, 1280);
  EXPECT_EQ(a->reports, want);

  const TrainerConfig broken = config(TempDir("resume-epochs-broken"));
  TrainOptions interrupted;
  interrupted.quiet = true;
  interrupted.interrupt_after_steps = 19;  // the last checkpoint: step 17's evaluation
  auto b1 = RunTraining(broken, interrupted);
  ASSERT_TRUE(b1.ok()) << b1.status();
  TrainOptions resume;
  resume.quiet = true;
  resume.resume = true;
  auto b2 = RunTraining(broken, resume);
  ASSERT_TRUE(b2.ok()) << b2.status();
  std::vector<Point> got = b1->reports;
  got.insert(got.end(), b2->reports.begin(), b2->reports.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(b2->samples, 1280);

  EXPECT_EQ(WithoutTiming(Lines(straight.output.dir + "/metrics.jsonl")),
            WithoutTiming(Lines(broken.output.dir + "/metrics.jsonl")));
  EXPECT_EQ(
      LineSamples(broken.output.dir, /*evals_only=*/true),
      (StepSamples{{4, 192}, {8, 384}, {12, 576}, {17, 784}, {21, 976}, {25, 1168}, {28, 1280}}));
}

// Bad input: the run fails with a one-line error that names `file`.
void ExpectError(const TrainerConfig& c, const std::string& file, const std::string& words) {
  TrainOptions quiet;
  quiet.quiet = true;
  auto s = RunTraining(c, quiet);
  ASSERT_FALSE(s.ok()) << "no error for " << words;
  const std::string m(s.status().message());
  EXPECT_TRUE(absl::StrContains(m, file)) << m;
  EXPECT_TRUE(absl::StrContains(m, words)) << m;
  EXPECT_FALSE(absl::StrContains(m, "\n")) << m;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = TempDir(name);
  std::ofstream(path) << text;
  return path;
}

TEST(TrainLoop, BadInputIsAClearError) {
  TrainerConfig c = SmallSts(TempDir("bad"));
  c.task.train = TempDir("does-not-exist.csv");
  ExpectError(c, c.task.train, "");

  c = SmallSts(TempDir("bad"));
  c.task.train = WriteFile("empty.csv", "");
  ExpectError(c, c.task.train, "");

  c = SmallSts(TempDir("bad"));
  c.task.train =
      WriteFile("short-rows.csv", "main-captions\tMSRvid\t2012test\t0001\t5.000\tonly one\n");
  ExpectError(c, c.task.train, "");

  c = SmallSts(TempDir("bad"));
  c.task.eval =
      WriteFile("bad-score.csv", "main-captions\tMSRvid\t2012test\t0001\t7.5\ta man\ta woman\n");
  ExpectError(c, c.task.eval, "score");

  c = SmallSts(TempDir("bad"));
  c.task.type = "nli";
  c.task.train = "data/sick/SICK.txt";
  c.task.format = "sick";
  c.task.eval = "";
  c.model.head = "data/golden/cls_head.safetensors";  // 3 x 128: SoftmaxLoss needs 3 x 384
  ExpectError(c, c.model.head, "size mismatch");

  c = SmallSts(TempDir("bad"));  // eval_every_steps 15
  c.train.eval_every_epochs = 0.125;
  ExpectError(c, "test", "train.eval_every_steps and train.eval_every_epochs are both > 0");

  c = SmallSts(TempDir("bad"));
  c.train.precision = "fp16";
  ExpectError(c, "test", "fp16 needs a GPU");

  c = SmallSts(TempDir("bad"));
  c.model.path = TempDir("no-model");
  ExpectError(c, c.model.path, "");

  // A truncated weights file.
  c = SmallSts(TempDir("bad"));
  const std::string broken = TempDir("broken-model");
  ASSERT_TRUE(MakeDirs(broken).ok());
  for (const char* f : {"config.json", "vocab.txt"}) {
    std::ifstream in(std::string("data/bert-tiny-random/") + f, std::ios::binary);
    std::ofstream(broken + "/" + f, std::ios::binary) << in.rdbuf();
  }
  std::ofstream(broken + "/model.safetensors") << "\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":";
  c.model.path = broken;
  ExpectError(c, broken, "");
}

// With no evaluation point during training (train.eval_every_* all 0, only the end would
// evaluate), evaluation data is optional: a missing or empty task.eval trains without evaluation.
// With a cadence, it is an error as before.
TEST(TrainLoop, EvaluationDataIsOptionalWhenOnlyTheEndWouldEvaluate) {
  const std::string empty = TempDir("eval-empty") + "/empty.csv";
  std::ofstream(empty).flush();
  for (const std::string& eval : {TempDir("eval-gone") + "/no-such.csv", empty}) {
    TrainerConfig c = SmallSts(TempDir("eval-off"));
    c.train.epochs = 0;
    c.train.max_steps = 3;
    c.train.eval_every_steps = 0;
    c.task.eval = eval;
    auto s = Quietly(c);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->samples, 3 * 32);
    EXPECT_EQ(LineSamples(c.output.dir, /*evals_only=*/true), StepSamples{});

    c.output.dir = TempDir("eval-on");
    c.train.eval_every_steps = 2;
    ExpectError(c, eval, "");
  }
}

// Padding to a multiple of 8 (what the trainer does on GPUs) changes shapes, not results.
TEST(TaskData, PaddingToMultiplesChangesNoEmbedding) {
  auto model = LoadBertModel("data/bert-tiny-random");
  ASSERT_TRUE(model.ok()) << model.status();
  auto tokenizer = WordPieceTokenizer::FromVocabFile("data/bert-tiny-random/vocab.txt");
  ASSERT_TRUE(tokenizer.ok());
  auto rows = ReadStsb("data/stsbenchmark/sts-dev.csv");
  ASSERT_TRUE(rows.ok());
  auto data = TaskData::Make(DataKind{"sts", RowTarget::kScore}, *rows, "stsb", *tokenizer, 128,
                             "sts-dev.csv");
  ASSERT_TRUE(data.ok()) << data.status();
  TaskModel task(*model, Pooling::kMean, MakeTask("sts").value(), 2);
  task->eval();
  torch::NoGradGuard no_grad;
  const std::vector<int64_t> idx = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const TaskBatch plain = data->Batch(idx), padded = data->Batch(idx, 8);
  EXPECT_EQ(padded.first.input_ids.size(1) % 8, 0);
  EXPECT_GT(padded.first.input_ids.size(1), plain.first.input_ids.size(1));
  const torch::Tensor a = task->Embed(plain.first), b = task->Embed(padded.first);
  EXPECT_LT((a - b).abs().max().item<double>(), 1e-5);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
