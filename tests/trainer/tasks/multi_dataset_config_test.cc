// task.datasets and train.multi_dataset_sampler in the trainer YAML, read with the loss registry
// installed (as trainer_torch does): each dataset's type from its loss, the shared loss keys,
// defaults, and the errors, each one line naming the file, the line and the key.
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/config/train_config.h"
#include "trainer/tasks/loss_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class MultiDataset : public ::testing::Test {
 protected:
  void SetUp() override { SetTaskSectionReader(&LossRegistryReader()); }
  void TearDown() override { SetTaskSectionReader(nullptr); }
  // `task` as lines 2.. of a YAML under model: {path: m}.
  static std::string Write(const std::string& task) {
    path_ = ::testing::TempDir() + "/multi_dataset.yaml";
    std::ofstream(path_) << "model: {path: m}\n" << task << "\ntrain: {epochs: 1}\n";
    return path_;
  }
  static absl::StatusOr<TrainerConfig> Load(const std::string& task,
                                            const std::vector<std::string>& overrides = {}) {
    return LoadTrainerConfig(Write(task), overrides);
  }
  // The error after "FILE:", "" when it loads.
  static std::string Error(const std::string& task) {
    auto c = Load(task);
    if (c.ok()) return "";
    const std::string message(c.status().message());
    EXPECT_TRUE(absl::StartsWith(message, path_ + ":")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message.substr(path_.size() + 1);
  }
  static std::string path_;
};
std::string MultiDataset::path_;

constexpr char kTwo[] = R"(task:
  datasets:
    nli: {train: a.jsonl, format: jsonl, loss: mnrl}
    margin:
      train: b.jsonl
      format: jsonl
      label_column: label
      loss: margin_mse
      prompts: {anchor: "query: ", positive: "passage: ", negative: "passage: "}
  loss_scale: 10)";

TEST_F(MultiDataset, EachDatasetsTypeFollowsFromItsLoss) {
  auto c = Load(kTwo);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->task.datasets.size(), 2u);
  const DatasetConfig& nli = c->task.datasets[0];
  const DatasetConfig& margin = c->task.datasets[1];
  EXPECT_EQ(nli.name, "nli");
  EXPECT_EQ(nli.type, "mnrl");
  EXPECT_EQ(nli.loss, "mnrl");
  EXPECT_TRUE(nli.prompts.empty());
  EXPECT_EQ(margin.loss, "margin_mse");
  EXPECT_EQ(margin.label_column, "label");
  EXPECT_EQ(margin.prompts.at("anchor"), "query: ");
  // The evaluation's type and the eval data's format: the first dataset's.
  EXPECT_EQ(c->task.type, "mnrl");
  EXPECT_EQ(c->task.format, "jsonl");
  EXPECT_TRUE(c->task.train.empty());
  EXPECT_EQ(c->train.multi_dataset_sampler, "proportional");
}

TEST_F(MultiDataset, DefaultsAndOverrides) {
  auto c = Load(R"(task:
  loss: mnrl
  prompts: "q: "
  datasets:
    a: {train: a.jsonl, format: jsonl}
    b: {train: b.jsonl, format: jsonl, loss: margin_mse})",
                {"train.multi_dataset_sampler=round_robin", "task.datasets.a.loss=cached_mnrl"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->train.multi_dataset_sampler, "round_robin");
  EXPECT_EQ(c->task.datasets[0].loss, "cached_mnrl");
  EXPECT_EQ(c->task.datasets[0].prompt, "q: ");  // task.prompts by default
  EXPECT_EQ(c->task.datasets[1].loss, "margin_mse");
  EXPECT_EQ(c->task.loss, "mnrl");
}

TEST_F(MultiDataset, TrainWithDatasetsIsAnError) {
  EXPECT_THAT(Error(R"(task:
  train: x.jsonl
  datasets: {a: {train: a.jsonl, format: jsonl, loss: mnrl}})"),
              StartsWith("3: task.train: and task.datasets are both given"));
}

TEST_F(MultiDataset, EntryErrorsNameTheirKey) {
  EXPECT_THAT(Error("task:\n  datasets: {a: {train: a.jsonl, loss: mnrl}}"),
              HasSubstr("task.datasets.a: missing required key 'format'"));
  EXPECT_THAT(Error("task:\n  datasets: {a: {format: jsonl, loss: mnrl}}"),
              HasSubstr("task.datasets.a: missing required key 'train'"));
  EXPECT_THAT(Error("task:\n  datasets: {a: {train: a, format: jsonl, loss: mnrl, eval: e}}"),
              HasSubstr("task.datasets.a"));
  EXPECT_THAT(Error("task:\n  datasets: {a: {train: a, format: jsonl, loss: nope}}"),
              StartsWith("3: task.datasets.a.loss: unknown task.loss \"nope\""));
  EXPECT_THAT(
      Error("task:\n  datasets: {a: {train: a, format: stsb, columns: [x, y], loss: mnrl}}"),
      HasSubstr("task.datasets.a.columns: only applies to format jsonl"));
  EXPECT_THAT(Error("task:\n  datasets: {a: {train: a, format: jsonl}}"),
              HasSubstr("task.datasets.a"));  // no loss anywhere
  EXPECT_THAT(Error("task:\n  datasets: {}"), HasSubstr("task.datasets: names no dataset"));
  EXPECT_THAT(Error("task:\n  datasets: [a, b]"), HasSubstr("task.datasets: must be a mapping"));
}

TEST_F(MultiDataset, TheLossKeysAreSharedAcrossDatasets) {
  // loss_scale is mnrl's, taken by the first dataset: no error for margin_mse's.
  EXPECT_EQ(Error(kTwo), "");
  // A key no dataset's loss takes is still an error.
  EXPECT_THAT(Error(R"(task:
  margin: 0.5
  datasets: {a: {train: a, format: jsonl, loss: mnrl}, b: {train: b, format: jsonl, loss: margin_mse}})"),
              HasSubstr("task.margin: only applies to task.loss"));
}

TEST_F(MultiDataset, SamplerIsAnEnum) {
  auto c = Load(kTwo, {"train.multi_dataset_sampler=random"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("train.multi_dataset_sampler"));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
