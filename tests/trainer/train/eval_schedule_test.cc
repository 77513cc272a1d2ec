// trainer/train/eval_schedule.h, the rule of trainer/train/train_loop.h ("Evaluation points and
// their keys"): samples_seen a function of (epoch, batch_in_epoch) with the DistributedSampler's
// padding (2 ranks, an odd data set), equal across an epoch boundary; the targets of
// eval_every_samples and eval_every_epochs (llround(j * f * N): rounding, f > 1, f * N < 1);
// a step that crosses two targets evaluates once under the larger; eval_every_steps keyed by
// samples_seen; the acceptance example (640 pairs, f = 1/8, batch 16 and 128); resuming from
// any step gives the uninterrupted run's points; more than one cadence is refused, naming both.
#include "trainer/train/eval_schedule.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

using Points = std::vector<std::pair<int64_t, int64_t>>;  // (step, key)

TrainConfig Cadence(int64_t batch, int64_t steps, int64_t samples, double epochs) {
  TrainConfig t;
  t.batch_size = batch;
  t.eval_every_steps = steps;
  t.eval_every_samples = samples;
  t.eval_every_epochs = epochs;
  return t;
}

EvalSchedule MakeOrDie(const TrainConfig& t, int64_t train_size, int64_t world) {
  absl::StatusOr<EvalSchedule> s = EvalSchedule::Make(t, train_size, world);
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

// The cadence's points of a run of `total_steps` steps as train_loop.cc walks it (grad_accum
// batches a step, fewer at an epoch's end), starting after step `from` (a resume): every
// (step, key) but the last step's, which is keyed by its samples_seen and listed last.
Points Walk(const EvalSchedule& s, int64_t train_size, int64_t world, int64_t batch,
            int64_t grad_accum, int64_t total_steps, int64_t from = 0) {
  const int64_t shard = (train_size + world - 1) / world;
  const int64_t batches_per_epoch = (shard + batch - 1) / batch;
  int64_t epoch = 0, in_epoch = 0, step = 0;
  Points points;
  while (step < total_steps) {
    if (in_epoch >= batches_per_epoch) {
      ++epoch;
      in_epoch = 0;
    }
    const int64_t before = s.SamplesSeen(epoch, in_epoch);
    in_epoch += std::min(grad_accum, batches_per_epoch - in_epoch);
    const int64_t after = s.SamplesSeen(epoch, in_epoch);
    ++step;
    if (step <= from) continue;
    if (step == total_steps) {
      points.emplace_back(step, after);
    } else if (std::optional<int64_t> key = s.KeyAt(step, before, after)) {
      points.emplace_back(step, *key);
    }
  }
  return points;
}

TEST(EvalSchedule, SamplesSeenPadsLikeTheDistributedSampler) {
  // 641 examples on 2 ranks: shard 321 (one example repeated), N = 642; batch 16: 21 batches
  // an epoch, the last of 1 example a rank.
  const EvalSchedule s = MakeOrDie(Cadence(16, 0, 0, 0), 641, 2);
  EXPECT_EQ(s.epoch_samples(), 642);
  EXPECT_EQ(s.SamplesSeen(0, 0), 0);
  EXPECT_EQ(s.SamplesSeen(0, 1), 32);
  EXPECT_EQ(s.SamplesSeen(0, 20), 640);
  EXPECT_EQ(s.SamplesSeen(0, 21), 642);  // an epoch's last step: (epoch + 1) * N
  EXPECT_EQ(s.SamplesSeen(1, 0), 642);
  EXPECT_EQ(s.SamplesSeen(3, 21), 4 * 642);
  EXPECT_EQ(s.SamplesSeen(2, 5), 2 * 642 + 2 * 5 * 16);

  const EvalSchedule one = MakeOrDie(Cadence(16, 0, 0, 0), 640, 1);
  EXPECT_EQ(one.epoch_samples(), 640);
  EXPECT_EQ(one.SamplesSeen(0, 40), 640);
  EXPECT_EQ(one.SamplesSeen(1, 0), 640);
}

// Hand-computed targets: NextTargetAfter(samples) and LastTargetAtOrBelow(samples).
using Targets = std::vector<std::pair<int64_t, std::optional<int64_t>>>;

void ExpectNext(const EvalSchedule& s, const Targets& targets) {
  for (const auto& [samples, next] : targets) {
    EXPECT_EQ(s.NextTargetAfter(samples), next) << "next after " << samples;
  }
}

void ExpectLast(const EvalSchedule& s, const Targets& targets) {
  for (const auto& [samples, last] : targets) {
    EXPECT_EQ(s.LastTargetAtOrBelow(samples), last) << "last at or below " << samples;
  }
}

TEST(EvalSchedule, EpochFractionTargets) {
  const EvalSchedule s = MakeOrDie(Cadence(16, 0, 0, 0.125), 640, 1);
  ExpectNext(s, {{0, 80}, {79, 80}, {80, 160}, {640, 720}});  // 720: on into the next epoch
  ExpectLast(s, {{79, std::nullopt},
                 {80, 80},
                 {639, 560},
                 {640, 640},
                 {int64_t{80} * 1000000007, int64_t{80} * 1000000007}});

  // Rounding: f = 0.1, N = 642 -> 64.2, 128.4, 192.6, 256.8, 321 -> 64, 128, 193, 257, 321.
  const EvalSchedule r = MakeOrDie(Cadence(16, 0, 0, 0.1), 641, 2);
  ExpectNext(r, {{0, 64}, {128, 193}, {193, 257}});
  ExpectLast(r, {{192, 128}, {193, 193}, {321, 321}});

  // More than an epoch: every other epoch.
  const EvalSchedule two = MakeOrDie(Cadence(16, 0, 0, 2.0), 640, 1);
  ExpectNext(two, {{0, 1280}, {1280, 2560}});
  ExpectLast(two, {{2559, 1280}});

  // f * N < 1: targets repeat (llround(0.64) = llround(1.28) = 1, 2, 3, 3, ...); each sample
  // count >= 1 is a target.
  const EvalSchedule tiny = MakeOrDie(Cadence(16, 0, 0, 0.001), 640, 1);
  ExpectNext(tiny, {{0, 1}, {16, 17}});
  ExpectLast(tiny, {{16, 16}});
  EXPECT_EQ(tiny.KeyAt(1, 0, 16), 16);
}

TEST(EvalSchedule, AcceptanceExample640PairsEveryEighthEpoch) {
  // Batch 16: 40 steps, every 5th an evaluation point, keys 80, ..., 560; the last: 640.
  const EvalSchedule b16 = MakeOrDie(Cadence(16, 0, 0, 0.125), 640, 1);
  EXPECT_EQ(
      Walk(b16, 640, 1, 16, 1, 40),
      (Points{
          {5, 80}, {10, 160}, {15, 240}, {20, 320}, {25, 400}, {30, 480}, {35, 560}, {40, 640}}));
  // Batch 128: 5 steps at 128, 256, 384, 512, 640 samples.
  const EvalSchedule b128 = MakeOrDie(Cadence(128, 0, 0, 0.125), 640, 1);
  EXPECT_EQ(Walk(b128, 640, 1, 128, 1, 5),
            (Points{{1, 80}, {2, 240}, {3, 320}, {4, 480}, {5, 640}}));
}

TEST(EvalSchedule, AStepCrossingTwoTargetsEvaluatesOnceUnderTheLarger) {
  const EvalSchedule s = MakeOrDie(Cadence(128, 0, 100, 0), 640, 1);
  EXPECT_EQ(s.KeyAt(4, 384, 512), 500);  // 400 and 500 lie in (384, 512]
  EXPECT_EQ(s.KeyAt(4, 400, 499), std::nullopt);
  EXPECT_EQ(s.KeyAt(4, 399, 400), 400);
  EXPECT_EQ(Walk(s, 640, 1, 128, 1, 5), (Points{{1, 100}, {2, 200}, {3, 300}, {4, 500}, {5, 640}}));
  // Two epochs on 2 ranks (N = 642), steps of 256 samples, the 3rd ending the epoch at 642:
  // 256, 512, 642, 898, 1154, 1284; every step crosses one to three targets of 100.
  const EvalSchedule d = MakeOrDie(Cadence(128, 0, 100, 0), 641, 2);
  EXPECT_EQ(Walk(d, 641, 2, 128, 1, 6),
            (Points{{1, 200}, {2, 500}, {3, 600}, {4, 800}, {5, 1100}, {6, 1284}}));
}

TEST(EvalSchedule, EveryStepsIsKeyedBySamplesSeen) {
  // 640 examples, batch 16 x grad_accum 2: 32 samples a step, 20 steps an epoch.
  const EvalSchedule s = MakeOrDie(Cadence(16, 15, 0, 0), 640, 1);
  EXPECT_EQ(s.KeyAt(15, 448, 480), 480);
  EXPECT_EQ(s.KeyAt(14, 416, 448), std::nullopt);
  EXPECT_EQ(s.LastTargetAtOrBelow(480), std::nullopt);  // no sample targets
  EXPECT_EQ(Walk(s, 640, 1, 16, 2, 40), (Points{{15, 480}, {30, 960}, {40, 1280}}));
}

TEST(EvalSchedule, NoCadenceMeansOnlyTheLastStep) {
  const EvalSchedule s = MakeOrDie(Cadence(16, 0, 0, 0), 640, 1);
  EXPECT_EQ(s.KeyAt(5, 64, 80), std::nullopt);
  EXPECT_EQ(Walk(s, 640, 1, 16, 1, 40), (Points{{40, 640}}));
}

TEST(EvalSchedule, ResumingFromAnyStepGivesTheSamePoints) {
  // 641 examples on 2 ranks, batch 48 x grad_accum 1, 3 epochs (7 steps each, the last short),
  // f = 0.3 of N = 642: targets fall inside steps and across epoch boundaries.
  const EvalSchedule s = MakeOrDie(Cadence(48, 0, 0, 0.3), 641, 2);
  const Points all = Walk(s, 641, 2, 48, 1, 21);
  ASSERT_GT(all.size(), 5u);
  for (int64_t from = 1; from < 21; ++from) {
    Points tail;
    for (const auto& p : all) {
      if (p.first > from) tail.push_back(p);
    }
    EXPECT_EQ(Walk(s, 641, 2, 48, 1, 21, from), tail) << "resumed after step " << from;
  }
}

TEST(EvalSchedule, RefusesTwoCadencesAndBadValues) {
  auto error = [](const TrainConfig& t) {
    absl::StatusOr<EvalSchedule> s = EvalSchedule::Make(t, 640, 1);
    return s.ok() ? std::string("ok") : std::string(s.status().message());
  };
  EXPECT_EQ(error(Cadence(16, 50, 0, 0.125)),
            "train.eval_every_steps and train.eval_every_epochs are both > 0: set at most one");
  EXPECT_EQ(error(Cadence(16, 0, 100, 0.125)),
            "train.eval_every_samples and train.eval_every_epochs are both > 0: set at most one");
  EXPECT_TRUE(absl::StrContains(error(Cadence(16, 0, -1, 0)), "must be >= 0"));
  EXPECT_TRUE(absl::StrContains(error(Cadence(16, 0, 0, -0.5)), "must be >= 0"));
  EXPECT_EQ(error(Cadence(16, 0, 0, 0.125)), "ok");
  EXPECT_FALSE(EvalSchedule::Make(Cadence(16, 0, 0, 0), 0, 1).ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
