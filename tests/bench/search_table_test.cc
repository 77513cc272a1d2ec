// The table trainer: curves read from a journal of the samples axis and from one keyed by
// optimizer steps, and the answers between grid points (log-linear in lr, nearest batch,
// linear in samples).
#include "bench/search_table.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hpo/journal/journal_writer.h"
#include "hpo/search_space.h"
#include "tests/bench/table_fixture.h"

namespace tunefleet {
namespace bench {
namespace {

using ::testing::HasSubstr;

TEST(SearchTableTest, ReadsTheSamplesAxis) {
  auto table = SearchTable::Load(WriteGridJournal("table_samples.log"), TableOptions());
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_FALSE(table->keyed_by_steps());
  ASSERT_EQ(table->points().size(), 6u);
  EXPECT_EQ(table->points()[0].keys, (std::vector<int64_t>{200, 400, 600, 800}));
  EXPECT_EQ(table->compute(), 6 * 800);
  EXPECT_EQ(table->max_total(), 800);
  EXPECT_DOUBLE_EQ(table->best(), 3 * 800 / 8000.0 + 0.064);
}

TEST(SearchTableTest, AnswersBetweenGridPoints) {
  auto table = SearchTable::Load(WriteGridJournal("table_answer.log"), TableOptions());
  ASSERT_TRUE(table.ok());
  // On a grid point: its curve, linear between keys and flat before the first.
  EXPECT_EQ(table->Answer({{"lr", 1e-3}, {"batch_size", 16}}, {100, 200, 300, 800}),
            (std::vector<double>{2 * 200 / 8000.0 + 0.016, 2 * 200 / 8000.0 + 0.016,
                                 2 * 300 / 8000.0 + 0.016, 2 * 800 / 8000.0 + 0.016}));
  // lr sqrt(1e-3 * 1e-2): half way in log lr between the two curves; batch 32 -> nearest
  // (log scale, tie -> the smaller) is 16; batch 40 -> 64.
  const double mid = std::sqrt(1e-3 * 1e-2);
  auto v = table->Answer({{"lr", mid}, {"batch_size", 32}}, {400});
  EXPECT_NEAR(v[0], 2.5 * 400 / 8000.0 + 0.016, 1e-12);
  v = table->Answer({{"lr", mid}, {"batch_size", 40}}, {400});
  EXPECT_NEAR(v[0], 2.5 * 400 / 8000.0 + 0.064, 1e-12);
  // Beyond the lr range: the end point's curve.
  EXPECT_EQ(table->Answer({{"lr", 1e-6}, {"batch_size", 64}}, {800})[0], 800 / 8000.0 + 0.064);
  EXPECT_EQ(table->Total({{"lr", 5e-3}, {"batch_size", 64}}), 800);
}

TEST(SearchTableTest, ConvertsAJournalKeyedBySteps) {
  const std::string path = WriteGridJournal("table_steps.log", true);
  EXPECT_THAT(std::string(SearchTable::Load(path, TableOptions()).status().message()),
              HasSubstr("give --epoch_samples"));
  TableOptions o;
  o.epoch_samples = 800;
  auto table = SearchTable::Load(path, o);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->keyed_by_steps());
  // Steps x batch back to samples, and the final value added at one epoch.
  EXPECT_EQ(table->points()[0].keys, (std::vector<int64_t>{192, 400, 592, 800}));  // batch 16
  EXPECT_EQ(table->points()[1].keys, (std::vector<int64_t>{192, 384, 576, 800}));  // batch 64
  EXPECT_EQ(table->points()[1].values.back(), 800 / 8000.0 + 0.064);
  EXPECT_EQ(table->compute(), 6 * 800);
  // The same grid on the samples axis has the same best.
  auto samples = SearchTable::Load(WriteGridJournal("table_same.log"), TableOptions());
  EXPECT_EQ(table->best(), samples->best());
}

TEST(SearchTableTest, APrunedTrialIsNoTable) {
  const std::string path = ::testing::TempDir() + "/table_pruned.log";
  std::remove(path.c_str());
  auto w = hpo::JournalWriter::Open(path);
  ASSERT_TRUE((*w)->CreateStudy("grid", true).ok());
  ASSERT_TRUE((*w)->SetStudyUserAttr("resource", "\"samples\"").ok());
  hpo::Trial t;
  t.params = {{"lr", 1e-3}, {"batch_size", 16}};
  ASSERT_TRUE((*w)->CreateTrial(t, GridSpace()).ok());
  ASSERT_TRUE((*w)->SetIntermediateValue(0, 100, 0.5).ok());
  t.state = hpo::TrialState::kPruned;
  ASSERT_TRUE((*w)->Finish(t).ok());
  EXPECT_THAT(std::string(SearchTable::Load(path, TableOptions()).status().message()),
              HasSubstr("trial 0 was pruned"));
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet
