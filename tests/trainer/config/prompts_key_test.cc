// trainer/config/prompts_key.h through the trainer YAML: task.prompts as one string or a map
// column -> prompt (in the file or an override), model.include_prompt, and the errors, which name
// the file, the line and the key.
#include "trainer/config/prompts_key.h"

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {
namespace {

// A config whose line 2 is `task`.
std::string Write(const std::string& model, const std::string& task) {
  const std::string path = ::testing::TempDir() + "/prompts.yaml";
  std::ofstream(path) << "model: {" << model << "}\n"
                      << "task: {" << task << "}\n"
                      << "train: {epochs: 1}\n";
  return path;
}

constexpr char kModel[] = "path: m";
constexpr char kTriplets[] = "type: mnrl, train: t.jsonl, format: jsonl";

TEST(PromptsKeyTest, OneStringForEveryColumn) {
  auto c = LoadTrainerConfig(Write(kModel, std::string(kTriplets) + ", prompts: 'query: '"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task.prompt, "query: ");
  EXPECT_TRUE(c->task.prompts.empty());
  EXPECT_TRUE(c->model.include_prompt);  // default
}

TEST(PromptsKeyTest, AMapByColumnWithoutEmptyPrompts) {
  auto c = LoadTrainerConfig(
      Write("path: m, include_prompt: false",
            std::string(kTriplets) +
                ", prompts: {anchor: 'query: ', positive: 'passage: ', negative: ''}"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task.prompt, "");
  const std::map<std::string, std::string> want = {{"anchor", "query: "},
                                                   {"positive", "passage: "}};
  EXPECT_EQ(c->task.prompts, want);
  EXPECT_FALSE(c->model.include_prompt);
}

// As tests/integration/sbert_parity_test.sh passes them: JSON, spaces escaped.
TEST(PromptsKeyTest, AnOverrideInFlowSyntax) {
  auto c = LoadTrainerConfig(Write(kModel, kTriplets), {R"(task.prompts={"anchor":"query:\u0020"})",
                                                        "model.include_prompt=false"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task.prompts, (std::map<std::string, std::string>{{"anchor", "query: "}}));
  EXPECT_FALSE(c->model.include_prompt);
  c = LoadTrainerConfig(Write(kModel, kTriplets), {R"(task.prompts="query:\u0020")"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task.prompt, "query: ");
}

struct BadCase {
  std::string model, task, message;
};

class PromptsKeyBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(PromptsKeyBadInputTest, NamesFileLineAndKey) {
  const BadCase& bad = GetParam();
  const std::string path = Write(bad.model, bad.task);
  auto c = LoadTrainerConfig(path);
  ASSERT_FALSE(c.ok()) << "accepted: " << bad.task;
  EXPECT_EQ(std::string(c.status().message()), path + ":2: " + bad.message);
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, PromptsKeyBadInputTest,
    ::testing::Values(
        BadCase{kModel,
                "type: mnrl, train: t.jsonl, format: jsonl, columns: [anchor, positive, "
                "negative], prompts: {foo: 'x: '}",
                "task.prompts: column \"foo\" is not a text column (anchor, positive, negative)"},
        BadCase{kModel, "type: sts, train: s.csv, format: stsb, prompts: {anchor: 'x: '}",
                "task.prompts: column \"anchor\" is not a text column (sentence1, sentence2)"},
        BadCase{"path: m, kind: cross_encoder", "train: t.jsonl, format: jsonl, prompts: 'x: '",
                "task.prompts: only applies to model.kind bi_encoder (not cross_encoder)"},
        BadCase{kModel, std::string(kTriplets) + ", prompts: {anchor: [a]}",
                "task.prompts.anchor: expected a string, got a list"}));

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
