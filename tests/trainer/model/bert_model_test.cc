// The LibTorch BERT encoder (trainer/model/bert_model.h) against Hugging Face transformers: it
// loads data/bert-tiny-random and reproduces data/golden/forward_sts_dev.json (mean-pooled
// embeddings of 64 STS-B dev sentences, the first two sentences' token states and pooler outputs)
// within 1e-5 in fp32 on the CPU, in eval mode. Token ids come from the golden tokenization, looked
// up by text. Also: HF parameter names, padding invariance, the pooling modes, input checks,
// save/load.
#include "trainer/model/bert_model.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include <torch/version.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trainer/model/pooling.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;

constexpr char kModel[] = "data/bert-tiny-random";

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return Json::parse(in);
}

const std::map<std::string, std::vector<int64_t>>& GoldenIds() {
  static const auto* ids = [] {
    auto* out = new std::map<std::string, std::vector<int64_t>>();
    std::ifstream in("data/golden/tokens_sts_dev.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      const Json j = Json::parse(line);
      (*out)[j.at("text").get<std::string>()] = j.at("ids").get<std::vector<int64_t>>();
    }
    return out;
  }();
  return *ids;
}

struct Batch {
  torch::Tensor ids, types, mask;
  std::vector<int64_t> lengths;
};

// Pads to the longest with pad id 0, as the golden run did.
Batch MakeBatch(const std::vector<std::string>& texts) {
  Batch b;
  int64_t longest = 0;
  for (const std::string& t : texts) {
    auto it = GoldenIds().find(t);
    EXPECT_NE(it, GoldenIds().end()) << t;
    b.lengths.push_back(static_cast<int64_t>(it->second.size()));
    longest = std::max(longest, b.lengths.back());
  }
  const int64_t n = static_cast<int64_t>(texts.size());
  b.ids = torch::zeros({n, longest}, torch::kLong);
  b.mask = torch::zeros({n, longest}, torch::kLong);
  auto ids = b.ids.accessor<int64_t, 2>();
  auto mask = b.mask.accessor<int64_t, 2>();
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int64_t>& golden = GoldenIds().at(texts[i]);
    for (int64_t j = 0; j < b.lengths[i]; ++j) {
      ids[i][j] = golden[j];
      mask[i][j] = 1;
    }
  }
  b.types = torch::zeros_like(b.ids);
  return b;
}

torch::Tensor ToTensor(const Json& j) {
  std::vector<float> flat;
  std::vector<int64_t> shape;
  const Json* level = &j;
  while (level->is_array()) {
    shape.push_back(static_cast<int64_t>(level->size()));
    level = &(*level)[0];
  }
  std::function<void(const Json&)> walk = [&](const Json& x) {
    if (x.is_array()) {
      for (const Json& y : x) walk(y);
    } else {
      flat.push_back(x.get<float>());
    }
  };
  walk(j);
  return torch::tensor(flat).view(shape);
}

BertModel& Model() {
  static BertModel* model = [] {
    auto m = LoadBertModel(kModel);
    EXPECT_TRUE(m.ok()) << m.status();
    return new BertModel(std::move(m).value());
  }();
  return *model;
}

double MaxAbsDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(BertModelTest, ParameterNamesAreTransformersStateDictNames) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> got;
  for (const auto& item : Model()->named_parameters()) {
    got.push_back({item.key(), item.value().sizes().vec()});
  }
  auto want = BertParameterShapes(Model()->config());
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  EXPECT_TRUE(Model()->has_pooler());
  EXPECT_FALSE(Model()->is_training());
}

TEST(BertModelTest, ReproducesTransformersForwardOnStsDev) {
  const Json golden = ReadJson("data/golden/forward_sts_dev.json");
  const auto sentences = golden.at("sentences").get<std::vector<std::string>>();
  ASSERT_EQ(sentences.size(), 64u);
  const Batch b = MakeBatch(sentences);
  torch::NoGradGuard no_grad;
  auto out = BertForward(Model(), b.ids, b.types, b.mask);
  ASSERT_TRUE(out.ok()) << out.status();
  const torch::Tensor mean = Pool(out->last_hidden_state, b.mask, Pooling::kMean);
  const torch::Tensor want_mean = ToTensor(golden.at("mean_pooled"));
  ASSERT_EQ(mean.sizes(), want_mean.sizes());
  const double mean_diff = MaxAbsDiff(mean, want_mean);

  double hidden_diff = 0;
  const Json& first2 = golden.at("last_hidden_state_first2");
  for (int i = 0; i < 2; ++i) {
    const torch::Tensor want = ToTensor(first2[i]);
    ASSERT_EQ(want.size(0), b.lengths[i]);
    hidden_diff = std::max(hidden_diff,
                           MaxAbsDiff(out->last_hidden_state[i].slice(0, 0, b.lengths[i]), want));
  }
  const double pooler_diff =
      MaxAbsDiff(out->pooler_output.slice(0, 0, 2), ToTensor(golden.at("pooler_output_first2")));
  std::cout << "LibTorch " << TORCH_VERSION_MAJOR << "." << TORCH_VERSION_MINOR
            << ", max |diff| vs transformers: mean_pooled " << mean_diff
            << ", last_hidden_state_first2 " << hidden_diff << ", pooler_output_first2 "
            << pooler_diff << "\n";
  EXPECT_LT(mean_diff, 1e-5);
  EXPECT_LT(hidden_diff, 1e-5);
  EXPECT_LT(pooler_diff, 1e-5);
}

TEST(BertModelTest, PaddingDoesNotChangeRealTokens) {
  const std::vector<std::string> texts = {"A man with a hard hat is dancing.",
                                          "A woman is playing the flute."};
  torch::NoGradGuard no_grad;
  const Batch both = MakeBatch(texts);
  auto out = BertForward(Model(), both.ids, both.types, both.mask);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 2; ++i) {
    const Batch alone = MakeBatch({texts[i]});
    auto single = BertForward(Model(), alone.ids, alone.types, alone.mask);
    ASSERT_TRUE(single.ok());
    EXPECT_LT(MaxAbsDiff(single->last_hidden_state[0],
                         out->last_hidden_state[i].slice(0, 0, both.lengths[i])),
              1e-5);
  }
}

TEST(BertModelTest, DropoutActsOnlyInTraining) {
  const Batch b = MakeBatch({"A man is playing a guitar."});
  torch::NoGradGuard no_grad;
  BertModel& m = Model();
  const torch::Tensor eval1 = m->forward(b.ids, b.types, b.mask).last_hidden_state;
  const torch::Tensor eval2 = m->forward(b.ids).last_hidden_state;  // default types and mask
  EXPECT_TRUE(torch::equal(eval1, eval2));
  m->train();
  const torch::Tensor train = m->forward(b.ids, b.types, b.mask).last_hidden_state;
  m->eval();
  EXPECT_GT(MaxAbsDiff(train, eval1), 1e-3);
}

TEST(BertModelTest, BadInputsAreStatusesNotExceptions) {
  const torch::Tensor ids = torch::tensor({{101, 2000, 102}}, torch::kLong);
  const torch::Tensor ones = torch::ones_like(ids);
  auto expect_error = [](const absl::StatusOr<BertOutput>& r, const std::string& part) {
    ASSERT_FALSE(r.ok()) << part;
    EXPECT_TRUE(absl::StrContains(r.status().message(), part)) << r.status();
  };
  expect_error(BertForward(Model(), torch::tensor({{101, 30522}}, torch::kLong), {}, {}),
               "input_ids must lie in [0, 30522)");
  expect_error(BertForward(Model(), ids.to(torch::kInt), {}, {}), "int64");
  expect_error(BertForward(Model(), ids, ones * 2, ones), "token_type_ids");
  expect_error(BertForward(Model(), ids, ones, torch::ones({1, 4}, torch::kLong)), "shape");
  expect_error(BertForward(Model(), torch::ones({1, 513}, torch::kLong), {}, {}),
               "exceeds max_position_embeddings 512");
}

TEST(BertModelTest, SaveAndLoadAgainGivesTheSameOutputs) {
  const std::string dir = ::testing::TempDir() + "/bert_saved";
  ASSERT_TRUE(SaveBertModel(Model(), dir).ok());
  BertCheckpoint info;
  auto again = LoadBertModel(dir, &info);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(info.unexpected_keys.empty());
  EXPECT_TRUE(info.tensors.empty());
  const auto a = BertStateDict(Model()), b = BertStateDict(*again);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) EXPECT_TRUE(torch::equal(t, b.at(name))) << name;
}

// Loading from a map the caller gives up takes the tensors over (no copy) where they fit, and
// copies the others; loading from a map the caller keeps always copies, so two models loaded
// from it share nothing. A model built uninitialized and loaded computes what a loaded one does.
TEST(BertModelTest, LoadingTakesOverGivenUpTensorsAndCopiesKeptOnes) {
  const auto reference = BertStateDict(Model());
  std::map<std::string, torch::Tensor> kept;
  for (const auto& [name, t] : reference) kept[name] = t.clone();
  BertModel copied(Model()->config(), true, /*init_weights=*/false);
  ASSERT_TRUE(LoadBertWeights(copied, kept).ok());

  std::map<std::string, torch::Tensor> given;
  for (const auto& [name, t] : reference) given[name] = t.clone();
  given["embeddings.LayerNorm.weight"] = given["embeddings.LayerNorm.weight"].to(torch::kDouble);
  given["encoder.layer.0.attention.self.query.weight"] =
      given["encoder.layer.0.attention.self.query.weight"].t().contiguous().t();  // strided
  std::map<std::string, const void*> where;
  for (const auto& [name, t] : given) where[name] = t.data_ptr();
  BertModel adopted(Model()->config(), true, /*init_weights=*/false);
  ASSERT_TRUE(LoadBertWeights(adopted, std::move(given)).ok());

  const auto a = BertStateDict(adopted), c = BertStateDict(copied);
  for (const auto& [name, t] : reference) {
    EXPECT_TRUE(torch::equal(a.at(name), t)) << name;
    EXPECT_TRUE(torch::equal(c.at(name), t)) << name;
    EXPECT_NE(c.at(name).data_ptr(), kept.at(name).data_ptr()) << name;
    const bool converted = name == "embeddings.LayerNorm.weight" ||
                           name == "encoder.layer.0.attention.self.query.weight";
    EXPECT_EQ(a.at(name).data_ptr() == where.at(name), !converted) << name;
    EXPECT_EQ(a.at(name).scalar_type(), torch::kFloat) << name;
    EXPECT_TRUE(a.at(name).requires_grad()) << name;
  }
  torch::NoGradGuard no_grad;
  adopted->eval();  // as Model() is: no dropout
  const torch::Tensor ids = torch::tensor({{101, 7592, 2088, 102}}, torch::kLong);
  auto x = BertForward(adopted, ids, {}, {});
  auto y = BertForward(Model(), ids, {}, {});
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_TRUE(torch::equal(x->last_hidden_state, y->last_hidden_state));
  // A missing weight is still an error: nothing uninitialized is left in a loaded model.
  std::map<std::string, torch::Tensor> short_one = kept;
  short_one.erase("encoder.layer.1.output.dense.weight");
  BertModel partial(Model()->config(), true, /*init_weights=*/false);
  EXPECT_FALSE(LoadBertWeights(partial, std::move(short_one)).ok());
}

TEST(BertModelTest, CheckpointWithoutPoolerGivesModelWithoutPooler) {
  const std::string dir = ::testing::TempDir() + "/bert_no_pooler";
  auto tensors = BertStateDict(Model());
  tensors.erase("pooler.dense.weight");
  tensors.erase("pooler.dense.bias");
  ASSERT_TRUE(SaveBertCheckpoint(dir, Model()->config(), tensors).ok());
  auto m = LoadBertModel(dir);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE((*m)->has_pooler());
  torch::NoGradGuard no_grad;
  auto out = BertForward(*m, torch::tensor({{101, 102}}, torch::kLong), {}, {});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(out->pooler_output.defined());
}

TEST(PoolingTest, MeanClsMaxFollowSentenceTransformers) {
  // Two sequences of length 3, H = 2; the second has one padded position.
  const torch::Tensor h = torch::tensor(
      {{{1.f, -2.f}, {3.f, -4.f}, {5.f, -6.f}}, {{-1.f, 2.f}, {-3.f, 4.f}, {100.f, 100.f}}});
  const torch::Tensor mask = torch::tensor({{1, 1, 1}, {1, 1, 0}}, torch::kLong);
  EXPECT_TRUE(
      torch::allclose(Pool(h, mask, Pooling::kMean), torch::tensor({{3.f, -4.f}, {-2.f, 3.f}})));
  EXPECT_TRUE(
      torch::equal(Pool(h, mask, Pooling::kCls), torch::tensor({{1.f, -2.f}, {-1.f, 2.f}})));
  EXPECT_TRUE(
      torch::equal(Pool(h, mask, Pooling::kMax), torch::tensor({{5.f, -2.f}, {-1.f, 4.f}})));
  // All-padding rows: mean divides by 1e-9 instead of 0, max gives -1e9.
  const torch::Tensor none = torch::zeros({2, 3}, torch::kLong);
  EXPECT_TRUE(torch::equal(Pool(h, none, Pooling::kMean), torch::zeros({2, 2})));
  EXPECT_TRUE(torch::equal(Pool(h, none, Pooling::kMax), torch::full({2, 2}, -1e9f)));
  EXPECT_EQ(*ParsePooling("max"), Pooling::kMax);
  EXPECT_STREQ(PoolingName(Pooling::kCls), "cls");
  EXPECT_FALSE(ParsePooling("sum").ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
