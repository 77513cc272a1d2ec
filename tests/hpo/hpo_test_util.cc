#include "tests/hpo/hpo_test_util.h"

#include <utility>

#include "common/yaml_config.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {

Study RunCompleting(Sampler& sampler, const SearchSpace& space,
                    const std::function<double(const Params&)>& value, Study study,
                    int64_t stop_at) {
  for (int guard = 0; guard < 1000; ++guard) {
    if (static_cast<int64_t>(study.trials.size()) == stop_at) break;
    const Availability a = sampler.NextAvailability(study);
    if (a != Availability::kReady) {
      EXPECT_EQ(a, Availability::kExhausted);
      break;
    }
    Trial t;
    t.number = static_cast<int64_t>(study.trials.size());
    SampleTrial(sampler, study, &t, space);
    t.state = TrialState::kComplete;
    t.value = value(t.params);
    study.trials.push_back(t);
    sampler.AfterTrial(study, study.trials.back());
  }
  return study;
}

SearchSpace LrBatchSpace(const std::vector<double>& batch_sizes) {
  SearchSpace space;
  Distribution& lr = space[kLrParam];
  lr.kind = Distribution::Kind::kFloat;
  lr.low = 1e-5;
  lr.high = 1e-3;
  lr.log = true;
  Distribution& batch = space[kBatchParam];
  batch.kind = Distribution::Kind::kCategorical;
  batch.integer_choices = true;
  batch.choices = batch_sizes;
  return space;
}

SearchSpace MixedSpace() {
  SearchSpace space = LrBatchSpace({16, 32, 64, 128});
  Distribution& epochs = space["train.epochs"];
  epochs.kind = Distribution::Kind::kInt;
  epochs.low = 1;
  epochs.high = 3;
  Distribution& pooling = space["model.pooling"];
  pooling.kind = Distribution::Kind::kCategorical;
  pooling.labels = {"mean", "cls", "max"};
  pooling.choices = {0, 1, 2};
  Distribution& wd = space["train.weight_decay"];
  wd.kind = Distribution::Kind::kFloat;
  wd.low = 0.0;
  wd.high = 0.1;
  return space;
}

size_t AddTrial(Study* study, TrialState state, std::map<int64_t, double> values,
                std::map<std::string, double> system_attrs) {
  Trial t;
  t.number = static_cast<int64_t>(study->trials.size());
  t.state = state;
  t.intermediate_values = std::move(values);
  t.system_attrs = std::move(system_attrs);
  study->trials.push_back(t);
  return study->trials.size() - 1;
}

SweepConfig ConfigFromYaml(const std::string& text, const std::string& file_name) {
  auto file = ConfigFile::Parse(text, file_name);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return SweepConfig();
  auto c = ParseSweepConfig(*file);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : SweepConfig();
}

}  // namespace hpo
}  // namespace tunefleet
