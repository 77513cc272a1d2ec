// The training loop (trainer/train/train_loop.h) against Hugging Face: the three 30-step golden
// trajectories of data/golden/train_trajectories.json (transformers + sentence-transformers
// losses, torch AdamW, clipping to 1.0, batch 16, dropout 0, constant lr 1e-4, fp32, file order)
// are reproduced through RunTraining and its metrics.jsonl: every step's loss and gradient norm
// (before clipping) within 1e-4 relative, and the final model's mean-pooled embeddings of the
// first 8 STS-B dev sentences within 1e-4 absolute.
//   cosine  sts on sts-train.csv (CosineSimilarityLoss, score / 5)
//   mnrl    mnrl on paws-wiki dev.tsv (rows labelled 1; in-batch negatives, scale 20)
//   cls     classification on SICK.txt, the pair through the pooler and the golden linear head
// And the other model families (data/golden/families/family_goldens.json's "cosine": 3 steps of
// the cosine loss from a RoBERTa, an XLM-R and an MPNet folder, their own tokenizers).
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/trainer/testing/trainer_test_util.h"
#include "trainer/data/datasets.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/pooling.h"
#include "trainer/train/train_loop.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;

constexpr double kRelTol = 1e-4;
constexpr double kAbsTol = 1e-4;

Json Golden(const std::string& kind) {
  std::ifstream in("data/golden/train_trajectories.json");
  EXPECT_TRUE(in.good());
  return Json::parse(in).at(kind);
}

// Mean-pooled embeddings of the first 8 sentence1 of sts-dev, in eval mode.
torch::Tensor DevEmbeddings(const std::string& model_dir) {
  auto model = LoadBertModel(model_dir);
  EXPECT_TRUE(model.ok()) << model.status();
  auto tokenizer = LoadFolderTokenizer(model_dir);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  auto rows = ReadStsb("data/stsbenchmark/sts-dev.csv");
  EXPECT_TRUE(rows.ok()) << rows.status();
  std::vector<Encoding> enc;
  for (int i = 0; i < 8; ++i) enc.push_back((*tokenizer)->Encode((*rows)[i].a, 128));
  PaddedBatch p = PadBatch(enc, (*tokenizer)->pad_id());
  auto t = [&](std::vector<int64_t>& v) {
    return torch::from_blob(v.data(), {p.rows, p.cols}, torch::kLong).clone();
  };
  torch::NoGradGuard no_grad;
  const torch::Tensor mask = t(p.attention_mask);
  BertOutput out = (*model)->forward(t(p.input_ids), t(p.token_type_ids), mask);
  return Pool(out.last_hidden_state, mask, Pooling::kMean);
}

void CheckTrajectory(const std::string& kind, TrainerConfig config, const Json& g) {
  TrainOptions options;
  options.quiet = true;
  auto summary = RunTraining(config, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->steps, g.at("steps").get<int64_t>());

  const std::vector<Json> lines = ReadJsonLines(config.output.dir + "/metrics.jsonl");
  const auto& losses = g.at("losses");
  const auto& norms = g.at("grad_norms_before_clip");
  ASSERT_EQ(lines.size(), losses.size());
  double worst_loss = 0, worst_norm = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_EQ(lines[i].at("step").get<int64_t>(), static_cast<int64_t>(i + 1));
    const double loss = lines[i].at("train/loss").get<double>();
    const double norm = lines[i].at("train/grad_norm").get<double>();
    worst_loss = std::max(worst_loss, RelErr(loss, losses[i].get<double>()));
    worst_norm = std::max(worst_norm, RelErr(norm, norms[i].get<double>()));
    EXPECT_LT(RelErr(loss, losses[i].get<double>()), kRelTol)
        << kind << " step " << i + 1 << ": loss " << loss << ", golden " << losses[i];
    EXPECT_LT(RelErr(norm, norms[i].get<double>()), kRelTol)
        << kind << " step " << i + 1 << ": grad norm " << norm << ", golden " << norms[i];
  }
  const torch::Tensor got = DevEmbeddings(config.output.dir + "/model");
  const auto want_rows = g.at("final_mean_pooled_dev8").get<std::vector<std::vector<double>>>();
  ASSERT_EQ(got.size(0), static_cast<int64_t>(want_rows.size()));
  double worst_emb = 0;
  for (size_t r = 0; r < want_rows.size(); ++r) {
    ASSERT_EQ(got.size(1), static_cast<int64_t>(want_rows[r].size()));
    for (size_t k = 0; k < want_rows[r].size(); ++k) {
      worst_emb = std::max(worst_emb, std::abs(got[r][k].item<double>() - want_rows[r][k]));
    }
  }
  EXPECT_LT(worst_emb, kAbsTol) << kind;
  std::printf("%s: max relative error loss %.3g, grad norm %.3g; embeddings max abs %.3g\n",
              kind.c_str(), worst_loss, worst_norm, worst_emb);
}

std::string OutDir(const std::string& kind) { return TestTempPath("trajectory-" + kind); }

TEST(TrainTrajectory, CosineMatchesSentenceTransformers) {
  const Json g = Golden("cosine");
  CheckTrajectory(
      "cosine",
      GoldenTrainerConfig(g, "sts", "data/stsbenchmark/sts-train.csv", "stsb", OutDir("cosine")),
      g);
}

TEST(TrainTrajectory, MnrlMatchesSentenceTransformers) {
  const Json g = Golden("mnrl");
  CheckTrajectory(
      "mnrl", GoldenTrainerConfig(g, "mnrl", "data/paws-wiki/dev.tsv", "paws", OutDir("mnrl")), g);
}

TEST(TrainTrajectory, ClassificationMatchesTransformers) {
  const Json g = Golden("cls");
  TrainerConfig c =
      GoldenTrainerConfig(g, "classification", "data/sick/SICK.txt", "sick", OutDir("cls"));
  c.model.head = "data/golden/cls_head.safetensors";
  c.task.num_labels = 3;
  CheckTrajectory("cls", c, g);
}

class FamilyTrajectory : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyTrajectory, CosineMatchesSentenceTransformers) {
  std::ifstream in("data/golden/families/family_goldens.json");
  ASSERT_TRUE(in.good());
  const Json g = Json::parse(in).at(GetParam()).at("cosine");
  TrainerConfig c = GoldenTrainerConfig(g, "sts", "data/stsbenchmark/sts-train.csv", "stsb",
                                        OutDir("family-" + GetParam()));
  c.model.path = "data/golden/families/" + GetParam();
  CheckTrajectory(GetParam(), c, g);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyTrajectory,
                         ::testing::Values("roberta-klue", "xlm-r", "mpnet", "distilbert"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) ch = std::isalnum(ch) ? ch : '_';
                           return n;
                         });

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
