// The cross-encoder heads of every model family (trainer/model/classifier_heads.h) on the golden
// folders (data/golden/bert-tiny-random's BERT and data/golden/families' RoBERTa, XLM-R, MPNet,
// DistilBERT): each family's head has transformers' *ForSequenceClassification tensor names and
// shapes, is initialised as _init_weights (biases 0, weights of std initializer_range), computes
// its class's formula from the tensors of those names (the first token's state, or BERT's
// pooler), and a folder saved with it (SaveBertCheckpoint with the head) has the class's layout
// (config.json's architectures, the base model prefix, no pooler where the class has none) and
// loads back to identical logits.
#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util/temp_dir.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/classifier_heads.h"
#include "trainer/model/hf_model_folder.h"
#include "trainer/model/model_family_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;

struct Family {
  const char* dir;
  const char* architecture;  // the *ForSequenceClassification class
  const char* prefix;        // its base_model_prefix
  ClassifierHead head;
  double dropout;  // the head's: the encoder's hidden dropout, DistilBERT's seq_classif_dropout
};
constexpr Family kFamilies[] = {
    {"data/bert-tiny-random", "BertForSequenceClassification", "bert.", ClassifierHead::kPooler,
     0.1},
    {"data/golden/families/roberta-klue", "RobertaForSequenceClassification", "roberta.",
     ClassifierHead::kDenseTanh, 0.1},
    {"data/golden/families/xlm-r", "XLMRobertaForSequenceClassification", "roberta.",
     ClassifierHead::kDenseTanh, 0.1},
    {"data/golden/families/mpnet", "MPNetForSequenceClassification", "mpnet.",
     ClassifierHead::kDenseTanh, 0.1},
    {"data/golden/families/distilbert", "DistilBertForSequenceClassification", "distilbert.",
     ClassifierHead::kPreClassifier, 0.2},
};

std::string Name(const Family& f) {
  const std::string dir = f.dir;
  return dir.substr(dir.rfind('/') + 1);
}

// A padded batch of 3 texts of the model's vocabulary: ids from 5 on, the third one shorter.
struct Batch {
  torch::Tensor ids, mask;
};
Batch MakeBatch(const BertConfig& config) {
  torch::Tensor ids = torch::arange(5, 5 + 3 * 7, torch::kLong).reshape({3, 7});
  torch::Tensor mask = torch::ones({3, 7}, torch::kLong);
  mask.index_put_({2, torch::indexing::Slice(4, torch::indexing::None)}, 0);
  ids = torch::where(mask == 1, ids, torch::full_like(ids, config.pad_token_id));
  return {ids, mask};
}

torch::Tensor Logits(BertModel& bert, ClassifierHeadModule& head, const Batch& b) {
  torch::NoGradGuard no_grad;
  const BertOutput out = bert->forward(b.ids, torch::Tensor(), b.mask);
  return head->Forward(out.last_hidden_state, out.pooler_output, /*training=*/false);
}

// The class's formula from the head's tensors by their names in the files.
torch::Tensor Formula(const Family& f, const std::map<std::string, torch::Tensor>& t,
                      const BertOutput& out) {
  const auto lin = [&t](const std::string& name, const torch::Tensor& x) {
    return torch::matmul(x, t.at(name + ".weight").t()) + t.at(name + ".bias");
  };
  const torch::Tensor first = out.last_hidden_state.select(1, 0);
  switch (f.head) {
    case ClassifierHead::kPooler:
      return lin("classifier", out.pooler_output);
    case ClassifierHead::kDenseTanh:
      return lin("classifier.out_proj", torch::tanh(lin("classifier.dense", first)));
    default:
      return lin("classifier", torch::relu(lin("pre_classifier", first)));
  }
}

std::vector<std::string> SavedNames(const std::string& dir) {
  absl::StatusOr<SafetensorsContents> c = ReadSafetensors(dir + "/model.safetensors");
  EXPECT_TRUE(c.ok()) << c.status();
  std::vector<std::string> names;
  if (c.ok()) {
    for (const auto& [name, t] : c->tensors) names.push_back(name);
  }
  return names;
}

class ClassifierHeadsTest : public ::testing::TestWithParam<Family> {};

TEST_P(ClassifierHeadsTest, NamesShapesAndInitialisation) {
  const Family& f = GetParam();
  absl::StatusOr<BertModel> bert = LoadBertModel(f.dir);
  ASSERT_TRUE(bert.ok()) << bert.status();
  const BertConfig& config = (*bert)->config();
  const ModelFamily& family = FamilyOf(config);
  EXPECT_EQ(family.classifier_head(), f.head);
  EXPECT_EQ(family.classifier_architecture(), f.architecture);
  EXPECT_EQ(family.base_model_prefix(), f.prefix);
  torch::manual_seed(7);
  ClassifierHeadModule head = MakeClassifierHead(config, 3);
  EXPECT_DOUBLE_EQ(head->dropout(), f.dropout);
  EXPECT_EQ(head->uses_pooler(), f.head == ClassifierHead::kPooler);
  const std::map<std::string, torch::Tensor> state = head->StateDict();
  const ParameterShapeList shapes = ClassifierHeadShapes(f.head, config.hidden_size, 3);
  ASSERT_EQ(state.size(), shapes.size());
  for (const auto& [name, shape] : shapes) {
    ASSERT_EQ(state.count(name), 1u) << name;
    EXPECT_EQ(state.at(name).sizes().vec(), shape) << name;
    EXPECT_TRUE(IsClassifierHeadTensor(f.head, name)) << name;
    if (absl::EndsWith(name, ".bias")) {
      EXPECT_EQ(state.at(name).abs().max().item<float>(), 0.0f) << name;
    } else {  // normal(0, 0.02): the sample std of >= 96 draws within 40%
      EXPECT_NEAR(state.at(name).std().item<double>(), 0.02, 0.008) << name;
    }
  }
  EXPECT_EQ(ClassifierHeadLabels(state), 3);
  EXPECT_FALSE(IsClassifierHeadTensor(f.head, "embeddings.word_embeddings.weight"));
  const Batch b = MakeBatch(config);
  torch::NoGradGuard no_grad;
  const BertOutput out = (*bert)->forward(b.ids, torch::Tensor(), b.mask);
  const torch::Tensor logits = head->Forward(out.last_hidden_state, out.pooler_output, false);
  EXPECT_EQ(logits.sizes().vec(), (std::vector<int64_t>{3, 3}));
  EXPECT_TRUE(torch::allclose(logits, Formula(f, state, out), 1e-5, 1e-6));
  // Dropout in training: a different draw, the same shape.
  EXPECT_EQ(head->Forward(out.last_hidden_state, out.pooler_output, true).sizes(), logits.sizes());
}

TEST_P(ClassifierHeadsTest, SavedFolderRoundTrip) {
  const Family& f = GetParam();
  absl::StatusOr<BertModel> bert = LoadBertModel(f.dir);
  ASSERT_TRUE(bert.ok()) << bert.status();
  torch::manual_seed(11);
  ClassifierHeadModule head = MakeClassifierHead((*bert)->config(), 1);
  const Batch b = MakeBatch((*bert)->config());
  const torch::Tensor want = Logits(*bert, head, b);

  const std::string dir = FreshTestDir(std::string("ce_") + Name(f));
  CheckpointSaveOptions options;
  options.source_dir = f.dir;
  options.head = head->StateDict();
  ASSERT_TRUE(SaveBertCheckpoint(dir, (*bert)->config(), BertStateDict(*bert), options).ok());
  std::ifstream in(dir + "/config.json");
  const Json config = Json::parse(in);
  EXPECT_EQ(config.at("architectures"), Json::array({f.architecture}));
  EXPECT_EQ(config.at("id2label"), (Json{{"0", "LABEL_0"}}));
  EXPECT_EQ(config.at("sentence_transformers").at("activation_fn"),
            "torch.nn.modules.activation.Sigmoid");
  std::vector<std::string> head_names;
  bool pooler = false;
  for (const std::string& name : SavedNames(dir)) {
    if (IsClassifierHeadTensor(f.head, name)) {
      head_names.push_back(name);
      continue;
    }
    EXPECT_TRUE(absl::StartsWith(name, f.prefix)) << name;
    pooler = pooler || absl::StrContains(name, ".pooler.");
  }
  EXPECT_EQ(pooler, f.head == ClassifierHead::kPooler);  // only BERT's class has one
  std::vector<std::string> want_names;
  for (const auto& [name, shape] : ClassifierHeadShapes(f.head, 1, 1)) want_names.push_back(name);
  std::sort(want_names.begin(), want_names.end());
  EXPECT_EQ(head_names, want_names);

  BertCheckpoint info;
  absl::StatusOr<BertModel> back = LoadBertModel(dir, &info);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(info.missing_keys.empty() && info.unexpected_keys.empty());
  EXPECT_EQ((*back)->has_pooler(), f.head == ClassifierHead::kPooler);
  ClassifierHeadModule loaded = MakeClassifierHead((*back)->config(), 1);
  ASSERT_EQ(info.head.size(), loaded->StateDict().size());
  {
    torch::NoGradGuard no_grad;
    for (auto& [name, param] : loaded->StateDict()) param.copy_(info.head.at(name));
  }
  EXPECT_TRUE(torch::equal(Logits(*back, loaded, b), want));
}

INSTANTIATE_TEST_SUITE_P(Families, ClassifierHeadsTest, ::testing::ValuesIn(kFamilies),
                         [](const ::testing::TestParamInfo<Family>& p) {
                           std::string n = Name(p.param);
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
