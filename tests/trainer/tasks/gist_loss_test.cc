// task.loss gist and cached_gist (trainer/tasks/gist_loss.h): GISTEmbedLoss's guided masking on
// embeddings worked out by hand (a false negative set to -inf, both margin strategies, the
// anchor-anchor, positive-positive and negative blocks), the YAML keys, and the guide loaded
// into data/bert-tiny-random's task model: cached_gist's value and gradients are gist's, the
// guide is not trained, and a guide with another vocabulary is refused at set-up.
#include "trainer/tasks/gist_loss.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/config/train_config.h"
#include "trainer/data/task_data.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/model/bert_model.h"
#include "trainer/tasks/loss_registry.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::HasSubstr;

constexpr char kTiny[] = "data/bert-tiny-random";

torch::Tensor Rows(const std::vector<std::vector<float>>& rows) {
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return torch::tensor(flat).reshape(
      {static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())});
}

// Model: a = (1, 0), (0, 1); p = (1, 0), (0.6, 0.8).  Guide: a = (1, 0), (0, -1);
// p = (0.6, 0.8), (0.8, 0.6).  Guide cosines a-p: [[0.6, 0.8], [-0.8, -0.6]], so the thresholds
// are the diagonal, 0.6 and -0.6, and p_1 is a false negative of a_0 (0.8 > 0.6): masked.
// a_1's other candidate p_0 (-0.8) is not. Temperature 0.5, so logits are 2 cos:
//   row 0: [2, -inf]  -> 0;   row 1: [0, 1.6] -> log(1 + e^-1.6) = 0.1839007
// mean 0.0919504. Unmasked (margin -1: no guide cosine exceeds threshold + 1), row 0 would be
// [2, 1.2] -> log(1 + e^-0.8) = 0.3711006: mean 0.2775007.
// Relative, margin -0.5 (limit 1.5 x threshold: 0.9 and -0.9): row 0 keeps p_1 (0.8 < 0.9),
// row 1 masks p_0 (-0.8 > -0.9): (0.3711006 + 0) / 2 = 0.1855503.
TEST(GistLossTest, GuideMasksFalseNegatives) {
  const std::vector<torch::Tensor> e = {Rows({{1, 0}, {0, 1}}), Rows({{1, 0}, {0.6f, 0.8f}})};
  const std::vector<torch::Tensor> g = {Rows({{1, 0}, {0, -1}}),
                                        Rows({{0.6f, 0.8f}, {0.8f, 0.6f}})};
  GistOptions o;
  o.temperature = 0.5;
  o.contrast_anchors = o.contrast_positives = false;
  EXPECT_NEAR(GistLoss(e, g, o).item<double>(), 0.0919504, 1e-6);
  o.margin = -1;
  EXPECT_NEAR(GistLoss(e, g, o).item<double>(), 0.2775007, 1e-6);
  o.relative = true;
  o.margin = 0.5;  // limits 0.3 and -0.3: the default's mask
  EXPECT_NEAR(GistLoss(e, g, o).item<double>(), 0.0919504, 1e-6);
  o.margin = -0.5;
  EXPECT_NEAR(GistLoss(e, g, o).item<double>(), 0.1855503, 1e-6);

  // The masked candidate takes no gradient: p_1 only enters row 1, through cos(a_1, p_1).
  torch::Tensor p = Rows({{1, 0}, {0.6f, 0.8f}}).requires_grad_(true);
  torch::Tensor a = Rows({{1, 0}, {0, 1}}).requires_grad_(true);
  o = GistOptions();
  o.temperature = 0.5;
  o.contrast_anchors = o.contrast_positives = false;
  GistLoss({a, p}, g, o).backward();
  EXPECT_EQ(a.grad()[0].abs().sum().item<float>(), 0.0f);  // row 0's loss is 0 whatever a_0
}

// The defaults contrast anchors with anchors and positives with positives, and a negative column
// adds its block; with the guide above and n = (0, 1), (1, 0), guide n = (0, 1), (0, -1):
//   guide a-a [[1, 0], [0, 1]]: row 0 masks a_0 (1 > 0.6), row 1 masks both (0, 1 > -0.6);
//   guide p-p [[1, 0.96], [0.96, 1]]: every entry masked;
//   guide a-n [[0, 0], [-1, 1]]: only (1, 1) masked (1 > -0.6).
// Logits (2 cos): row 0: ap [2, -inf], aa [-inf, 0], pp [-inf, -inf], an [0, 2]
//   -> log(2 e^2 + 2) - 2 = 0.8200752;
// row 1: ap [0, 1.6], aa and pp -inf, an [2, -inf] -> log(1 + e^1.6 + e^2) - 1.6 = 0.9909236.
// Mean 0.9054994. Without the negative column: rows 0.1269280 and 0.1839007, mean 0.1554144.
TEST(GistLossTest, AnchorPositiveAndNegativeBlocks) {
  const std::vector<torch::Tensor> e = {Rows({{1, 0}, {0, 1}}), Rows({{1, 0}, {0.6f, 0.8f}}),
                                        Rows({{0, 1}, {1, 0}})};
  const std::vector<torch::Tensor> g = {Rows({{1, 0}, {0, -1}}), Rows({{0.6f, 0.8f}, {0.8f, 0.6f}}),
                                        Rows({{0, 1}, {0, -1}})};
  GistOptions o;
  o.temperature = 0.5;
  EXPECT_NEAR(GistLoss(e, g, o).item<double>(), 0.9054994, 1e-6);
  EXPECT_NEAR(GistLoss({e[0], e[1]}, {g[0], g[1]}, o).item<double>(), 0.1554144, 1e-6);
  // The default temperature, 0.01 (logits 100 cos): row 0 [100, -inf | -inf, 0 | -inf, -inf |
  // 0, 100] gives log(2 e^100 + 2) - 100, row 1 [0, 80 | -inf... | 100, -inf] gives
  // log(1 + e^80 + e^100) - 80.
  o.temperature = 0.01;
  const double row0 = std::log(2.0) + std::log1p(std::exp(-100.0));
  const double row1 = 100 + std::log1p(std::exp(-20.0) + std::exp(-100.0)) - 80;
  EXPECT_NEAR(GistLoss(e, g, o).item<double>(), (row0 + row1) / 2, 1e-4);
}

// The YAML keys, as `trainer train` reads them.
class GistConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { SetTaskSectionReader(&LossRegistryReader()); }
  void TearDown() override { SetTaskSectionReader(nullptr); }
  std::string Write(const std::string& task) const {
    std::ofstream(path_) << "model: {path: m}\n" << task << "\ntrain: {epochs: 1}\n";
    return path_;
  }
  // "" when `task` loads, else the error after "PATH:".
  std::string Error(const std::string& task) const {
    auto c = LoadTrainerConfig(Write(task));
    if (c.ok()) return "";
    const std::string message(c.status().message());
    return absl::StartsWith(message, path_ + ":") ? message.substr(path_.size() + 1) : message;
  }
  const std::string path_ = ::testing::TempDir() + "/gist.yaml";
};

TEST_F(GistConfigTest, Keys) {
  const std::string base = "task: {type: mnrl, train: a.jsonl, format: jsonl";
  EXPECT_EQ(Error(base + ", loss: gist}"),
            "2: task.guide_model: is required for task.loss gist: the guide's model folder");
  EXPECT_EQ(Error(base + ", loss: cached_gist}"),
            "2: task.guide_model: is required for task.loss cached_gist: the guide's model "
            "folder");
  EXPECT_EQ(Error(base + ", loss: mnrl, guide_model: " + kTiny + "}"),
            "2: task.guide_model: only applies to task.loss gist and cached_gist");
  EXPECT_EQ(Error(base + ", loss: gist, guide_model: /no/such/guide}"),
            "2: task.guide_model: /no/such/guide: no such folder");
  const std::string gist = base + ", loss: gist, guide_model: " + kTiny;
  EXPECT_EQ(Error(gist + ", temperature: 0}"), "2: task.temperature: must be a number > 0, got 0");
  EXPECT_EQ(Error(gist + ", margin_strategy: cosine}"),
            "2: task.margin_strategy: expected one of absolute, relative; got 'cosine'");
  EXPECT_THAT(Error(gist + ", loss_scale: 20}"), HasSubstr("task.loss_scale: only applies to"));
  EXPECT_THAT(Error(gist + ", cached_mini_batch: 4}"),
              HasSubstr("task.cached_mini_batch: only applies to task.loss cached_mnrl"));

  auto c = LoadTrainerConfig(Write(gist + "}"));
  ASSERT_TRUE(c.ok()) << c.status();
  auto task = MakeTask(c->task);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->Describe(),
            "GISTEmbedLoss (guide data/bert-tiny-random, temperature 0.01, margin absolute 0, "
            "in-batch anchors and positives contrasted)");
  EXPECT_TRUE((*task)->in_batch_negatives());
  EXPECT_FALSE((*task)->multi_pass_backward());

  c = LoadTrainerConfig(Write(base + ", loss: cached_gist, guide_model: " + kTiny +
                              ", temperature: 0.05, margin_strategy: relative, margin: 0.1, "
                              "contrast_positives: false, cached_mini_batch: 4}"));
  ASSERT_TRUE(c.ok()) << c.status();
  task = MakeTask(c->task);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->Describe(),
            "CachedGISTEmbedLoss (guide data/bert-tiny-random, temperature 0.05, margin relative "
            "0.1, in-batch anchors contrasted, mini-batch 4)");
  EXPECT_TRUE((*task)->multi_pass_backward());
  EXPECT_EQ((*task)->activation_texts(), 4);
}

// A task model of data/bert-tiny-random with `loss`, its guide the same folder, or `guide`.
TaskModel TinyWithGuide(const std::string& loss, const Tokenizer& tokenizer,
                        const std::string& guide = kTiny) {
  const std::string path = ::testing::TempDir() + "/gist_model.yaml";
  std::ofstream(path) << "model: {path: " << kTiny << "}\ntask: {type: mnrl, loss: " << loss
                      << ", train: a.jsonl, format: jsonl, guide_model: " << kTiny
                      << (loss == "cached_gist" ? ", cached_mini_batch: 2" : "")
                      << "}\ntrain: {epochs: 1}\n";
  SetTaskSectionReader(&LossRegistryReader());
  auto c = LoadTrainerConfig(path, {"task.guide_model=" + guide});
  SetTaskSectionReader(nullptr);
  EXPECT_TRUE(c.ok()) << c.status();
  TaskPtr task = MakeTask(c->task).value();
  auto bert = LoadBertModel(kTiny);
  EXPECT_TRUE(bert.ok()) << bert.status();
  TaskModel model(*bert, Pooling::kMean, task, 0);
  model->train();
  absl::Status s = task->PrepareModel(*model, tokenizer, 128);
  if (!s.ok()) throw std::runtime_error(std::string(s.message()));
  return model;
}

// Five (anchor, positive, negative) rows. No pair of texts comes back in another block: a row
// (p, a) beside (a, p) would give the guide a cosine equal to a threshold, a tie that the
// rounding of each pass decides.
TaskBatch Triplets(const Tokenizer& t) {
  const std::vector<std::vector<std::string>> rows = {
      {"A man is playing a guitar.", "Someone plays an instrument.", "A dog runs."},
      {"Two kids are in a park.", "Children are outside.", "A man is playing a guitar."},
      {"The cat sleeps on the sofa.", "A cat is sleeping.", "The cat is awake and eating."},
      {"A woman slices an onion.", "Someone is cutting a vegetable.", "A woman sings."},
      {"A boy rides a bike.", "A child is cycling.", "A boy is swimming."}};
  std::vector<std::vector<Encoding>> columns(3);
  for (const auto& row : rows) {
    for (size_t c = 0; c < 3; ++c) columns[c].push_back(t.Encode(row[c], 128));
  }
  TaskBatch batch;
  batch.size = static_cast<int64_t>(rows.size());
  batch.first = PadTexts(columns[0], t.pad_id());
  batch.second = PadTexts(columns[1], t.pad_id());
  batch.negatives.push_back(PadTexts(columns[2], t.pad_id()));
  return batch;
}

// Loss and the encoder's gradients.
std::pair<double, std::vector<torch::Tensor>> LossAndGrads(TaskModel& model,
                                                           const TaskBatch& batch) {
  model->zero_grad();
  torch::Tensor loss = model->Loss(batch);
  loss.backward();
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : model->TrainableParameters()) {
    grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  }
  return {loss.item<double>(), grads};
}

TEST(GistGuideTest, CachedGistIsGistAndTheGuideIsFrozen) {
  auto tokenizer = LoadFolderTokenizer(kTiny);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const TaskBatch batch = Triplets(**tokenizer);
  TaskModel gist = TinyWithGuide("gist", **tokenizer);
  TaskModel cached = TinyWithGuide("cached_gist", **tokenizer);
  ASSERT_NE(gist->loss_module(), nullptr);
  EXPECT_FALSE(gist->loss_module()->is_training());  // train() leaves the guide in eval mode
  std::set<const void*> guide;
  for (const torch::Tensor& p : gist->loss_module()->parameters()) {
    EXPECT_FALSE(p.requires_grad());
    guide.insert(p.data_ptr());
  }
  EXPECT_FALSE(guide.empty());
  for (const torch::Tensor& p : gist->TrainableParameters())
    EXPECT_EQ(guide.count(p.data_ptr()), 0);
  // The folder's dropout off, so that both passes see the same encoder.
  gist->eval();
  cached->eval();
  const auto [want, want_grads] = LossAndGrads(gist, batch);
  const auto [got, got_grads] = LossAndGrads(cached, batch);
  EXPECT_TRUE(std::isfinite(want) && want > 0) << want;
  EXPECT_NEAR(got, want, 1e-5 * want);
  ASSERT_EQ(got_grads.size(), want_grads.size());
  for (size_t i = 0; i < want_grads.size(); ++i) {
    const double diff = (got_grads[i] - want_grads[i]).norm().item<double>();
    EXPECT_LE(diff, 1e-4 * want_grads[i].norm().item<double>() + 1e-8) << "parameter " << i;
  }
  for (const torch::Tensor& p : gist->loss_module()->parameters()) {
    EXPECT_FALSE(p.grad().defined());
  }
}

// A guide folder with data/bert-tiny-random's weights but a vocabulary with two tokens swapped.
std::string OtherVocabularyGuide() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "other-vocab-guide";
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(kTiny)) {
    const std::string name = entry.path().filename().string();
    if (name == "vocab.txt" || name == "tokenizer.json") continue;
    fs::copy_file(entry.path(), dir / name, fs::copy_options::overwrite_existing);
  }
  std::ifstream in(std::string(kTiny) + "/vocab.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (std::string& line : lines) {  // "the" and "a" trade ids
    if (line == "the") {
      line = "a";
    } else if (line == "a") {
      line = "the";
    }
  }
  std::ofstream out(dir / "vocab.txt");
  for (const std::string& line : lines) out << line << "\n";
  return dir.string();
}

TEST(GistGuideTest, AnotherVocabularyIsRefused) {
  auto tokenizer = LoadFolderTokenizer(kTiny);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const std::string guide = OtherVocabularyGuide();
  try {
    TinyWithGuide("gist", **tokenizer, guide);
    ADD_FAILURE() << "a guide with another vocabulary was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("task.guide_model: " + guide + ": its tokenizer"));
    EXPECT_THAT(e.what(), HasSubstr("the guide must share the model's vocabulary"));
  }
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
