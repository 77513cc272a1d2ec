// Sweep YAML in W&B's spellings (top-level method, log_uniform_values, hyperband's min_iter,
// max_iter, eta and s counted in evaluations) and a pruner or method type set on the command line
// over the file's: what they become, and each bad input an error naming the file, the line and
// the dotted key.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "tests/hpo/base_sweep.h"
#include "tests/hpo/trainer_in_process.h"

namespace tunefleet {
namespace hpo {
namespace {

class SweepConfigBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(SweepConfigBadInputTest, NamesFileLineAndKey) { ExpectNamesFileLineAndKey(GetParam()); }

// W&B's spellings that were there before hyperband's: top-level method, log_uniform_values.
TEST(SweepConfigWandbTest, TopLevelMethodAndLogUniformValues) {
  std::string text =
      BaseWith(6, "  lr: {distribution: log_uniform_values, min: 1.0e-5, max: 1.0e-3}");
  text += "method: random\n";
  text.replace(text.find("  method: random_then_grid\n"), 27, "");
  auto c = LoadSweepConfigInProcess(WriteFile("wandb_method.yaml", text));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->method, "random");
  EXPECT_EQ(c->lr.distribution, "log_uniform");
  EXPECT_DOUBLE_EQ(c->lr.max, 1e-3);
}

// The synthetic trainer's evaluation interval is samples_per_step (64 in kBase).
TEST(SweepConfigWandbTest, HyperbandIterationsAreEvaluationIntervals) {
  auto c = LoadSweepConfigInProcess(WriteFile(
      "hb_iter.yaml",
      BaseWith(13, "early_terminate: {type: hyperband, min_iter: 2, max_iter: 18, eta: 3}")));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pruner->type(), "hyperband");
  EXPECT_EQ(PrunerField(*c, "min_resource"), std::to_string(2 * 64));
  EXPECT_EQ(PrunerField(*c, "max_resource"), std::to_string(18 * 64));
  EXPECT_EQ(PrunerField(*c, "reduction_factor"), std::to_string(3));
  EXPECT_TRUE(c->notes.empty());
  // max_iter alone: min_resource stays one interval (auto).
  auto m = LoadSweepConfigInProcess(WriteFile(
      "hb_max.yaml", BaseWith(13, "early_terminate: {type: hyperband, max_iter: 10, eta: 2}")));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(PrunerField(*m, "min_resource"), std::to_string(64));
  EXPECT_EQ(PrunerField(*m, "max_resource"), std::to_string(640));
  EXPECT_EQ(PrunerField(*m, "reduction_factor"), std::to_string(2));
}

// s brackets with max_iter: min_iter = floor(max_iter / eta^s).
TEST(SweepConfigWandbTest, HyperbandBracketsFromMaxIter) {
  struct Case {
    const char* yaml;
    int64_t min_iter;
  };
  for (const Case& k : {Case{"{type: hyperband, max_iter: 27, s: 2}", 3},  // eta 3 by default
                        Case{"{type: hyperband, max_iter: 27, s: 2, eta: 2}", 6},
                        Case{"{type: hyperband, max_iter: 81, s: 3, eta: 3}", 3},
                        Case{"{type: hyperband, max_iter: 5, s: 0}", 5}}) {
    auto c = LoadSweepConfigInProcess(
        WriteFile("hb_s.yaml", BaseWith(13, std::string("early_terminate: ") + k.yaml)));
    ASSERT_TRUE(c.ok()) << k.yaml << ": " << c.status();
    EXPECT_EQ(PrunerField(*c, "min_resource"), std::to_string(k.min_iter * 64)) << k.yaml;
    EXPECT_EQ(std::stoll(PrunerField(*c, "max_resource")) % 64, 0) << k.yaml;
  }
}

TEST(SweepConfigWandbTest, HyperbandIterationsOfARealTrainer) {
  // 10 training pairs, 5 evaluations an epoch: an interval is 2 samples.
  std::string rows;
  for (int i = 0; i < 10; ++i) {
    rows += "main-captions\tMSRvid\t2012test\t000" + std::to_string(i) +
            "\t3.0\tA man plays.\tA man is playing.\n";
  }
  const std::string train = WriteFile("hb_train.csv", rows);
  const std::string trainer =
      WriteFile("hb_trainer.yaml",
                "model: {path: m}\ntask: {type: sts, train: " + train + ", format: stsb}\n");
  auto c = LoadSweepConfigInProcess(
      WriteFile("hb_real.yaml",
                BaseWith(3, "trainer: {config: " + trainer + ", evals_per_epoch: 5}")),
      {"early_terminate={type: hyperband, min_iter: 3, max_iter: 15}"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->trainer.samples_per_epoch, 10);
  EXPECT_EQ(PrunerField(*c, "min_resource"), std::to_string(6));
  EXPECT_EQ(PrunerField(*c, "max_resource"), std::to_string(30));
  // Unreadable data: an interval cannot be sized, and the error says what to give instead.
  const std::string nodata =
      WriteFile("hb_nodata.yaml",
                "model: {path: m}\ntask: {type: sts, train: /nonexistent.csv, format: stsb}\n");
  const std::string path =
      WriteFile("hb_nodata_sweep.yaml", BaseWith(3, "trainer: {config: " + nodata + "}"));
  EXPECT_EQ(LoadError(path, {"early_terminate={type: hyperband, min_iter: 3}"}),
            path +
                ": early_terminate.min_iter: counts evaluation intervals, but the training "
                "data cannot be read here to size it: give min_resource in samples");
}

const BadCase kBadHyperband[] = {
    {13, "early_terminate: {type: hyperband, min_iter: 2, min_resource: 100}",
     "early_terminate.min_iter: give min_iter (W&B's spelling) or min_resource, not both"},
    {13, "early_terminate: {type: hyperband, max_iter: 9, max_resource: 900}",
     "early_terminate.max_iter: give max_iter (W&B's spelling) or max_resource, not both"},
    {13, "early_terminate: {type: hyperband, eta: 2, reduction_factor: 3}",
     "early_terminate.eta: give eta (W&B's spelling) or reduction_factor, not both"},
    {13, "early_terminate: {type: hyperband, max_iter: 27, strict: true}",
     "early_terminate.strict: W&B's strict hyperband is not supported (tunefleet's hyperband is "
     "Optuna's HyperbandPruner); remove it"},
    {13, "early_terminate: {type: hyperband, s: 2}",
     "early_terminate.s: needs max_iter (min_iter = max_iter / eta^s)"},
    {13, "early_terminate: {type: hyperband, max_iter: 27, min_iter: 1, s: 2}",
     "early_terminate.s: s sets the smallest rung from max_iter (max_iter / eta^s): give s or "
     "min_iter, not both"},
    {13, "early_terminate: {type: hyperband, max_iter: 27, s: 4}",
     "early_terminate.s: max_iter / eta^s = 27 / 3^4 is below one evaluation: use a smaller s"},
    {13, "early_terminate: {type: hyperband, min_iter: 0}",
     "early_terminate.min_iter: must be >= 1, got 0"},
    {13, "early_terminate: {type: hyperband, min_iter: 9, max_iter: 3}",
     "early_terminate.max_iter: must be >= min_iter (9), got 3"},
    {13, "early_terminate: {type: hyperband, eta: 1}", "early_terminate.eta: must be >= 2, got 1"},
    {13, "early_terminate: {type: median, min_iter: 2}",
     "early_terminate.min_iter: unknown key; expected one of: type, n_startup_trials, "
     "n_warmup_steps, interval_steps, n_min_trials"},
};

INSTANTIATE_TEST_SUITE_P(BadHyperband, SweepConfigBadInputTest, ::testing::ValuesIn(kBadHyperband));

// A type set on the command line drops the file's keys of the old type, and says so.
TEST(SweepConfigTypeOverrideTest, DropsTheFilesKeysOfTheOldType) {
  const std::string path = WriteFile("type_ov.yaml", BaseWith(0, ""));
  auto none = LoadSweepConfigInProcess(path, {"early_terminate.type=none"});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->pruner->type(), "none");
  EXPECT_EQ(none->notes, std::vector<std::string>{
                             "early_terminate.type=none (override): dropped n_startup_trials, "
                             "n_warmup_steps, interval_steps from " +
                             path});
  auto hb =
      LoadSweepConfigInProcess(path, {"early_terminate.type=hyperband", "early_terminate.eta=2"});
  ASSERT_TRUE(hb.ok()) << hb.status();
  EXPECT_EQ(hb->pruner->type(), "hyperband");
  EXPECT_EQ(PrunerField(*hb, "reduction_factor"), std::to_string(2));
  EXPECT_EQ(PrunerField(*hb, "min_resource"), std::to_string(64));
  EXPECT_EQ(hb->notes.size(), 1u);
  // The same type again drops nothing.
  auto same = LoadSweepConfigInProcess(path, {"early_terminate.type=median"});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(PrunerField(*same, "n_startup_trials"), std::to_string(3));
  EXPECT_TRUE(same->notes.empty());
}

TEST(SweepConfigTypeOverrideTest, AKeyGivenWithTheNewTypeIsStillChecked) {
  const std::string path = WriteFile("type_ov_bad.yaml", BaseWith(0, ""));
  EXPECT_EQ(LoadError(path, {"early_terminate.type=none", "early_terminate.n_startup_trials=5"}),
            path +
                ": override 'early_terminate.n_startup_trials=5': "
                "early_terminate.n_startup_trials: type none does not take it (median, "
                "percentile "
                "do); "
                "drop it, or set early_terminate.type=median");
  // Without a type override the file's keys are checked as before.
  const std::string mixed = WriteFile(
      "type_mixed.yaml", BaseWith(13, "early_terminate: {type: none, n_startup_trials: 3}"));
  EXPECT_EQ(LoadError(mixed),
            mixed + ":13: early_terminate.n_startup_trials: unknown key; expected one of: type");
  // A key no type takes is a mistake even when the type is overridden.
  const std::string typo =
      WriteFile("type_typo.yaml", BaseWith(13, "early_terminate: {type: median, n_warmup: 3}"));
  EXPECT_EQ(LoadError(typo, {"early_terminate.type=none"}),
            typo + ":13: early_terminate.n_warmup: unknown key; expected one of: type");
}

// W&B's method and search.method: the command line's spelling wins over the file's.
TEST(SweepConfigTypeOverrideTest, MethodOnTheCommandLineWinsOverTheOtherSpelling) {
  const std::string path = WriteFile("method_ov.yaml", BaseWith(0, ""));
  auto c = LoadSweepConfigInProcess(path, {"method=random"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->method, "random");
  EXPECT_EQ(c->notes,
            std::vector<std::string>{"method (override): ignored search.method from " + path});
  std::string text = BaseWith(10, "  # method: W&B's spelling below") + "method: grid\n";
  const std::string top = WriteFile("method_top.yaml", text);
  auto s = LoadSweepConfigInProcess(top, {"search.method=random_then_grid"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->method, "random_then_grid");
  // Both spellings in the file stay an error.
  const std::string both = WriteFile("method_both.yaml", BaseWith(0, "") + "method: grid\n");
  EXPECT_EQ(LoadError(both), both + ":16: method: give the method once: method or search.method");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
