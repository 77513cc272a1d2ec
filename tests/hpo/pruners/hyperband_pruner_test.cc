#include "hpo/pruners/hyperband_pruner.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

// Expected values below come from Debian's python3-optuna 3.1 (HyperbandPruner's
// _n_brackets, _trial_allocation_budgets and _get_bracket_id, and should_prune on a study with
// the same name and reports), pasted in.

using Attrs = std::map<std::string, double>;

HyperbandSpec Spec(int64_t min_resource, int64_t max_resource, int64_t reduction_factor,
                   int64_t bootstrap_count = 0) {
  return {min_resource, max_resource, reduction_factor, bootstrap_count};
}

Study MakeStudy(const std::string& name, bool maximize, int n_trials) {
  Study s;
  s.name = name;
  s.maximize = maximize;
  for (int i = 0; i < n_trials; ++i) AddTrial(&s, TrialState::kRunning, {});
  return s;
}

std::vector<int64_t> Brackets(const std::string& name, const std::vector<int64_t>& budgets,
                              int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(HyperbandBracket(name, i, budgets));
  return out;
}

TEST(HyperbandPrunerTest, Crc32IsZlibs) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
  EXPECT_EQ(Crc32("a"), 0xE8B7BE43u);
  EXPECT_EQ(Crc32("sweep_0"), 0x44EACEDAu);
  EXPECT_EQ(Crc32("\xC3\xA9tude_7"), 0x9D7FA463u);  // "étude_7" in UTF-8
}

TEST(HyperbandPrunerTest, BracketCountIsPythonsFloatLog) {
  EXPECT_EQ(HyperbandBracketCount(1, 81, 3), 5);
  EXPECT_EQ(HyperbandBracketCount(1, 243, 3), 5);    // log is 4.999999999999999
  EXPECT_EQ(HyperbandBracketCount(1, 1000, 10), 3);  // log is 2.9999999999999996
  EXPECT_EQ(HyperbandBracketCount(1, 125, 5), 4);    // log is 3.0000000000000004
  EXPECT_EQ(HyperbandBracketCount(1, 9, 3), 3);
  EXPECT_EQ(HyperbandBracketCount(1, 8, 2), 4);
  EXPECT_EQ(HyperbandBracketCount(1, 100, 3), 5);
  EXPECT_EQ(HyperbandBracketCount(1000, 1000000, 3), 7);
  EXPECT_EQ(HyperbandBracketCount(3, 3, 3), 1);
  EXPECT_EQ(HyperbandBracketCount(3, 5, 2), 1);
  EXPECT_EQ(HyperbandBracketCount(3, 2, 3), 0);
  EXPECT_EQ(HyperbandBracketCount(3, 1, 3), 0);  // log is exactly -1
  EXPECT_EQ(HyperbandBracketCount(4, 1, 3), -1);
  EXPECT_EQ(HyperbandBracketCount(100, 11, 3), -2);
}

TEST(HyperbandPrunerTest, Budgets) {
  EXPECT_EQ(HyperbandBudgets(5, 3), (std::vector<int64_t>{81, 34, 15, 8, 5}));
  EXPECT_EQ(HyperbandBudgets(7, 2), (std::vector<int64_t>{64, 38, 23, 14, 10, 7, 7}));
  EXPECT_EQ(HyperbandBudgets(7, 3), (std::vector<int64_t>{729, 284, 114, 48, 21, 11, 7}));
  EXPECT_EQ(HyperbandBudgets(3, 4), (std::vector<int64_t>{16, 6, 3}));
  EXPECT_EQ(HyperbandBudgets(1, 3), (std::vector<int64_t>{1}));
  EXPECT_TRUE(HyperbandBudgets(0, 3).empty());
  EXPECT_TRUE(HyperbandBudgets(-2, 3).empty());
}

TEST(HyperbandPrunerTest, BracketAssignmentIsOptunas) {
  struct Case {
    const char* study;
    int64_t n_brackets;
    int64_t reduction_factor;
    std::vector<int64_t> brackets;  // of trials 0..23
  };
  const Case cases[] = {
      {"sweep", 5, 3, {2, 0, 0, 1, 1, 2, 0, 1, 0, 0, 3, 0, 4, 1, 2, 1, 2, 0, 0, 0, 0, 4, 0, 3}},
      {"lr-bert", 7, 2, {1, 3, 3, 1, 4, 1, 0, 0, 0, 0, 1, 0, 0, 6, 2, 3, 0, 1, 2, 1, 3, 0, 5, 4}},
      {"sbert_stsb", 7, 3, {0, 2, 0, 1, 0, 0, 4, 0, 0, 0, 1, 0,
                            0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0}},
      {"\xC3\xA9tude", 3, 4, {0, 0, 0, 0, 2, 1, 2, 1, 2, 0, 0, 0,
                              0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.study);
    EXPECT_EQ(Brackets(c.study, HyperbandBudgets(c.n_brackets, c.reduction_factor), 24),
              c.brackets);
  }
}

TEST(HyperbandPrunerTest, LargeBudgetsAreExactBelowTwoToThe32) {
  // max_resource 2^31, factor 2: 32 brackets, a total budget above every CRC-32.
  const std::vector<int64_t> budgets = HyperbandBudgets(32, 2);
  ASSERT_EQ(budgets.size(), 32u);
  EXPECT_EQ(budgets[0], 2147483648);
  EXPECT_EQ(budgets[1], 1108378658);
  EXPECT_EQ(budgets[2], 572662307);
  int64_t total = 0;
  for (int64_t b : budgets) total += b;
  EXPECT_EQ(total, 4443876860);
  EXPECT_EQ(Brackets("sweep", budgets, 20),
            (std::vector<int64_t>{0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 4, 0, 0, 1, 4, 0, 0, 1, 3}));
}

TEST(HyperbandPrunerTest, BudgetsOfTwoToThe32OrMorePutEveryTrialInBracketZero) {
  for (int64_t max_resource : {int64_t{1} << 32, int64_t{1} << 62}) {
    const int64_t n_brackets = HyperbandBracketCount(1, max_resource, 2);
    EXPECT_EQ(n_brackets, max_resource == (int64_t{1} << 32) ? 33 : 63);
    const std::vector<int64_t> budgets = HyperbandBudgets(n_brackets, 2);
    EXPECT_EQ(budgets[0], int64_t{1} << 32);  // saturated
    EXPECT_EQ(Brackets("sweep", budgets, 40), std::vector<int64_t>(40, 0));
  }
}

TEST(HyperbandPrunerTest, BracketsAreIsolatedAndStartAtTheirOwnRung) {
  // "sweep" with 5 brackets (budgets 81, 34, 15, 8, 5): trials 1 and 2 are in bracket 0 (rung 0
  // ends at step 1), 3 and 4 in bracket 1 (step 3), 0 in bracket 2 (step 9).
  HyperbandPruner pruner(Spec(1, 81, 3));
  Study s = MakeStudy("sweep", /*maximize=*/false, 5);
  auto report = [&](size_t i, int64_t step, double value) {
    s.trials[i].intermediate_values[step] = value;
    return pruner.Prune(&s, i);
  };
  EXPECT_FALSE(report(1, 1, 1.0));
  EXPECT_EQ(s.trials[1].system_attrs, (Attrs{{"completed_rung_0", 1.0}}));
  EXPECT_TRUE(report(2, 1, 5.0));  // worse than trial 1, its bracket's only other entrant
  EXPECT_EQ(s.trials[2].system_attrs, (Attrs{{"completed_rung_0", 5.0}}));

  EXPECT_FALSE(report(3, 1, 5.0));  // bracket 1's rung 0 ends at step 3
  EXPECT_TRUE(s.trials[3].system_attrs.empty());
  // Ranked against bracket 1 alone, 5.0 is the best; against the whole study it would lose
  // to trial 1's 1.0.
  EXPECT_FALSE(report(3, 3, 5.0));
  EXPECT_EQ(s.trials[3].system_attrs, (Attrs{{"completed_rung_0", 5.0}}));
  EXPECT_TRUE(report(4, 3, 6.0));
  EXPECT_EQ(s.trials[4].system_attrs, (Attrs{{"completed_rung_0", 6.0}}));

  EXPECT_FALSE(report(0, 8, 9.0));
  EXPECT_TRUE(s.trials[0].system_attrs.empty());
  EXPECT_FALSE(report(0, 9, 9.0));
  EXPECT_EQ(s.trials[0].system_attrs, (Attrs{{"completed_rung_0", 9.0}}));
  EXPECT_EQ(pruner.n_brackets(), 5);
}

TEST(HyperbandPrunerTest, TheStudyNameChoosesTheBrackets) {
  // Trials 1 and 2 share bracket 0 in "sweep"; in "lr-sweep" trial 1 is in bracket 1 (its
  // rung 0 ends at step 3) and trial 2 in bracket 0, its first entrant.
  ASSERT_EQ(HyperbandBracket("lr-sweep", 1, HyperbandBudgets(5, 3)), 1);
  ASSERT_EQ(HyperbandBracket("lr-sweep", 2, HyperbandBudgets(5, 3)), 0);
  for (const char* name : {"sweep", "lr-sweep"}) {
    SCOPED_TRACE(name);
    const bool sweep = std::string(name) == "sweep";
    HyperbandPruner pruner(Spec(1, 81, 3));
    Study s = MakeStudy(name, /*maximize=*/false, 3);
    s.trials[1].intermediate_values[1] = 1.0;
    EXPECT_FALSE(pruner.Prune(&s, 1));
    EXPECT_EQ(s.trials[1].system_attrs.size(), sweep ? 1u : 0u);
    s.trials[2].intermediate_values[1] = 5.0;
    EXPECT_EQ(pruner.Prune(&s, 2), sweep);
  }
}

TEST(HyperbandPrunerTest, AutoMaxResourceWaitsForACompleteTrialThenSticks) {
  HyperbandPruner pruner(Spec(1, 0, 3));
  Study s = MakeStudy("sweep", /*maximize=*/false, 0);
  AddTrial(&s, TrialState::kPruned, {{900, 1.0}});  // not COMPLETE: no estimate
  AddTrial(&s, TrialState::kComplete, {});          // no reports: no estimate
  const size_t r = AddTrial(&s, TrialState::kRunning, {});
  EXPECT_FALSE(pruner.Prune(&s, r));
  EXPECT_FALSE(pruner.n_brackets());

  // max_resource = 8 + 1 = 9: 3 brackets (budgets 9, 5, 3), made by a call for a trial that
  // has not reported.
  AddTrial(&s, TrialState::kComplete, {{3, 1.0}, {8, 1.0}});
  EXPECT_FALSE(pruner.Prune(&s, r));
  EXPECT_EQ(pruner.n_brackets(), 3);
  // Optuna: trials 0..7 are in brackets 1, 0, 0, 0, 2, 0, 1, 1; trial 2 (r) is in bracket 0.
  EXPECT_EQ(Brackets("sweep", HyperbandBudgets(3, 3), 8),
            (std::vector<int64_t>{1, 0, 0, 0, 2, 0, 1, 1}));

  // Kept: a longer COMPLETE trial changes nothing.
  AddTrial(&s, TrialState::kComplete, {{10000, 1.0}});
  s.trials[r].intermediate_values[1] = 0.5;
  EXPECT_FALSE(pruner.Prune(&s, r));
  EXPECT_EQ(pruner.n_brackets(), 3);
  EXPECT_EQ(s.trials[r].system_attrs, (Attrs{{"completed_rung_0", 0.5}}));
}

TEST(HyperbandPrunerTest, NoBracketsNeverPrune) {
  // max_resource < min_resource: n_brackets <= 0, so nothing is ever judged, not even a NaN.
  for (HyperbandSpec spec : {Spec(10, 5, 3), Spec(4, 1, 3), Spec(3, 1, 3, 2)}) {
    HyperbandPruner pruner(spec);
    Study s = MakeStudy("sweep", /*maximize=*/true, 3);
    for (size_t i = 0; i < 3; ++i) {
      s.trials[i].intermediate_values = {{100, kNaN}, {100000, kNaN}};
      EXPECT_FALSE(pruner.Prune(&s, i));
      EXPECT_TRUE(s.trials[i].system_attrs.empty());
    }
    EXPECT_LE(*pruner.n_brackets(), 0);
  }
}

TEST(HyperbandPrunerTest, AutoMaxResourceBelowMinResourceStaysWithoutBrackets) {
  // Optuna: min_resource 100, the first COMPLETE trial ends at step 10: max_resource 11,
  // n_brackets -2, and a longer COMPLETE trial later does not revive it.
  HyperbandPruner pruner(Spec(100, 0, 3));
  Study s = MakeStudy("sweep", /*maximize=*/true, 0);
  AddTrial(&s, TrialState::kComplete, {{10, 1.0}});
  const size_t b = AddTrial(&s, TrialState::kRunning, {{5000, kNaN}});
  EXPECT_FALSE(pruner.Prune(&s, b));
  EXPECT_EQ(pruner.n_brackets(), -2);
  AddTrial(&s, TrialState::kComplete, {{10000, 1.0}});
  EXPECT_FALSE(pruner.Prune(&s, b));
  EXPECT_EQ(pruner.n_brackets(), -2);
}

TEST(HyperbandPrunerTest, BootstrapCountAppliesPerBracket) {
  // "sweep", 5 brackets: trials 1, 2, 6 are bracket 0's first three. With bootstrap_count 2 the
  // first two are pruned at rung 0 whatever their values; trial 3 (bracket 1) counts for none.
  HyperbandPruner pruner(Spec(1, 81, 3, 2));
  Study s = MakeStudy("sweep", /*maximize=*/true, 7);
  for (size_t i : {1, 3, 2}) {
    s.trials[i].intermediate_values[3] = 1.0;
    EXPECT_TRUE(pruner.Prune(&s, i)) << i;
  }
  s.trials[6].intermediate_values[1] = 1.0;
  EXPECT_FALSE(pruner.Prune(&s, 6));  // 3 entrants at bracket 0's rung 0, a tie for the best
  EXPECT_EQ(s.trials[6].system_attrs, (Attrs{{"completed_rung_0", 1.0}}));
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
