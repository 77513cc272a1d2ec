#include "tests/bench/table_fixture.h"

#include <cstdio>

#include "gtest/gtest.h"
#include "hpo/journal/journal_writer.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace bench {

hpo::SearchSpace GridSpace() {
  hpo::SearchSpace s;
  s["lr"].kind = hpo::Distribution::Kind::kFloat;
  s["lr"].low = 1e-4;
  s["lr"].high = 1e-2;
  s["lr"].log = true;
  s["batch_size"].kind = hpo::Distribution::Kind::kCategorical;
  s["batch_size"].integer_choices = true;
  s["batch_size"].choices = {16, 64};
  return s;
}

double GridValue(int i, double batch, int64_t k) { return (i + 1) * k / 8000.0 + batch / 1000; }

std::string WriteGridJournal(const std::string& name, bool steps) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::remove(path.c_str());
  auto w = hpo::JournalWriter::Open(path);
  EXPECT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*w)->CreateStudy("grid", true).ok());
  if (!steps) {
    EXPECT_TRUE((*w)->SetStudyUserAttr("resource", "\"samples\"").ok());
  }
  const hpo::SearchSpace space = GridSpace();
  int64_t n = 0;
  const double lrs[] = {1e-4, 1e-3, 1e-2};
  for (int i = 0; i < 3; ++i) {
    for (double batch : {16.0, 64.0}) {
      hpo::Trial t;
      t.number = n++;
      t.params = {{"lr", lrs[i]}, {"batch_size", batch}};
      EXPECT_TRUE((*w)->CreateTrial(t, space).ok());
      for (int64_t k : {200, 400, 600, 800}) {
        if (steps && k == 800) break;
        const int64_t key = steps ? k / static_cast<int64_t>(batch) : k;
        EXPECT_TRUE((*w)->SetIntermediateValue(t.number, key, GridValue(i, batch, k)).ok());
      }
      t.state = hpo::TrialState::kComplete;
      t.value = GridValue(i, batch, 800);
      EXPECT_TRUE((*w)->Finish(t).ok());
    }
  }
  return path;
}

}  // namespace bench
}  // namespace tunefleet
