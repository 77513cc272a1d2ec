// The loss registry: the trainer YAML's task section as trainer_torch reads it (the reader
// installed, as its main does), the task of each registered type, and what a reader that links
// no LibTorch (none installed) still accepts.
#include "trainer/tasks/loss_registry.h"

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/tasks/all_losses.h"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Yaml(const std::string& model, const std::string& task) {
  const std::string path = ::testing::TempDir() + "/loss_registry.yaml";
  std::ofstream(path) << model << "\n" << task << "\n" << "train: {epochs: 1}\n";
  return path;
}

class WithReader : public ::testing::Test {
 protected:
  void SetUp() override { SetTaskSectionReader(&LossRegistryReader()); }
  void TearDown() override { SetTaskSectionReader(nullptr); }
  // The error of loading `task` (line 2) under model line `model` (line 1), "" when it loads.
  static std::string Error(const std::string& task,
                           const std::string& model = "model: {path: m}") {
    const std::string path = Yaml(model, task);
    auto c = LoadTrainerConfig(path);
    if (c.ok()) return "";
    const std::string message(c.status().message());
    EXPECT_TRUE(absl::StartsWith(message, path + ":")) << message;
    return message.substr(path.size() + 1);
  }
};

TEST_F(WithReader, TypeMustBeRegistered) {
  const std::string e = Error("task: {type: regression, train: a.csv, format: stsb}");
  EXPECT_THAT(e, StartsWith("2: task.type: expected one of sts, mnrl, nli, classification"));
  EXPECT_THAT(e, HasSubstr("; got 'regression'"));
}

TEST_F(WithReader, KeysOnlyForTheTypesThatTakeThem) {
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, num_labels: 3}"),
            "2: task.num_labels: only applies to task types classification and nli");
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb}", "model: {path: m, head: h}"),
            "1: model.head: only applies to task types nli and classification");
  // What the resolved config writes for every type loads again.
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, num_labels: 0, "
                  "mnrl_gather: false}"),
            "");
  EXPECT_EQ(Error("task: {type: nli, train: a.csv, format: sick, num_labels: 3}",
                  "model: {path: m, head: h}"),
            "");
  // The common keys, then those of the registered types.
  std::string keys = "type, train, eval, format, num_labels, mnrl_gather";
  for (const std::string& key : LossRegistryReader().keys) {
    if (key != "num_labels") keys += ", " + key;
  }
  EXPECT_EQ(Error("task: {type: sts, train: a.csv, format: stsb, num_label: 3}"),
            "2: task.num_label: unknown key; expected one of: " + keys);
}

TEST(LossRegistryTest, EveryTypeBuildsItsTask) {
  ASSERT_GE(AllLossKinds().size(), 4u);
  for (const LossKind* kind : AllLossKinds()) {
    auto task = MakeTask(kind->type);
    ASSERT_TRUE(task.ok()) << task.status();
    EXPECT_EQ((*task)->type(), kind->type);
    EXPECT_EQ((*task)->train_data().task, kind->type);
    EXPECT_EQ(FindLossKind(kind->type), kind);
  }
  const TaskPtr sts = MakeTask("sts").value(), mnrl = MakeTask("mnrl").value(),
                nli = MakeTask("nli").value(), cls = MakeTask("classification").value();
  EXPECT_EQ(sts->train_data().target, RowTarget::kScore);
  EXPECT_EQ(mnrl->train_data().target, RowTarget::kPositivePairs);
  EXPECT_EQ(mnrl->eval_data().target, RowTarget::kScore);  // scored as sts
  EXPECT_EQ(nli->train_data().target, RowTarget::kLabel);
  EXPECT_EQ(cls->train_data().texts(), 1);
  EXPECT_EQ(nli->train_data().texts(), 2);
  EXPECT_FALSE(sts->has_head());
  EXPECT_TRUE(nli->has_head() && cls->has_head());
  EXPECT_TRUE(cls->uses_pooler());
  EXPECT_FALSE(nli->uses_pooler());
  EXPECT_EQ(PrimaryMetric(sts->evaluation()), std::string("eval/spearman"));
  EXPECT_EQ(PrimaryMetric(cls->evaluation()), std::string("eval/accuracy"));
  auto unknown = MakeTask("regression");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()),
              StartsWith("unknown task type \"regression\" (expected sts, mnrl, nli, "
                         "classification"));
}

TEST(LossRegistryTest, WithoutAReaderTheCommonKeysAreChecked) {
  // A reader of the YAML without LibTorch: any type name; the trainer checks it later.
  auto c = LoadTrainerConfig(Yaml("model: {path: m}", "task: {type: regression, train: a.csv, "
                                                      "format: stsb}"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(MakeTask(c->task).ok());
  auto bad = LoadTrainerConfig(
      Yaml("model: {path: m}", "task: {type: sts, train: a.csv, format: stsb, typo: 1}"));
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
