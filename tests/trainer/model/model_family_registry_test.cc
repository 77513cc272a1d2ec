// The model family registry (trainer/model/model_family_registry.h) and what every family must
// do (trainer/model/model_family.h), checked for each registered family; and the BERT family's
// choices against transformers' BertConfig / BertModel names (data/bert-tiny-random is a folder
// transformers saved).
#include "trainer/model/model_family_registry.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trainer/model/all_families.h"
#include "trainer/model/bert_family.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kModel[] = "data/bert-tiny-random";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ModelFamilyRegistryTest, FindsEachFamilyByItsModelType) {
  ASSERT_FALSE(AllModelFamilies().empty());
  std::set<std::string> seen;
  std::vector<std::string> in_order;
  for (const ModelFamily* family : AllModelFamilies()) {
    EXPECT_TRUE(seen.insert(std::string(family->model_type())).second) << family->model_type();
    EXPECT_EQ(FindModelFamily(family->model_type()), family);
    in_order.emplace_back(family->model_type());
  }
  EXPECT_EQ(ModelTypes(), in_order);  // registry order
  EXPECT_EQ(FindModelFamily("bert"), &BertFamily());
  EXPECT_EQ(FindModelFamily("gpt2"), nullptr);
  EXPECT_EQ(FindModelFamily(""), nullptr);
  EXPECT_EQ(&FamilyOf(BertConfig{}), &BertFamily());  // a config made in code is BERT's
}

TEST(ModelFamilyRegistryTest, ReadsTransformersConfigByItsModelType) {
  absl::StatusOr<BertConfig> c = ReadModelConfig(std::string(kModel) + "/config.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model_type, "bert");
  EXPECT_EQ(c->hidden_size, 128);
  EXPECT_EQ(c->num_hidden_layers, 2);
  EXPECT_EQ(c->vocab_size, 30522);
  // Older BERT folders have no model_type: the first family (BERT) reads them.
  nlohmann::json j = nlohmann::json::parse(ReadAll(std::string(kModel) + "/config.json"));
  j.erase("model_type");
  absl::StatusOr<BertConfig> untyped = ParseModelConfig(j.dump(), "m/config.json");
  ASSERT_TRUE(untyped.ok()) << untyped.status();
  EXPECT_EQ(untyped->model_type, "bert");
  EXPECT_EQ(untyped->hidden_size, 128);
}

TEST(ModelFamilyRegistryTest, UnknownModelTypeIsOneLineNamingFileKeyAndFamilies) {
  nlohmann::json j = nlohmann::json::parse(ReadAll(std::string(kModel) + "/config.json"));
  for (const nlohmann::json& type : {nlohmann::json("gpt2"), nlohmann::json(5)}) {
    j["model_type"] = type;
    absl::StatusOr<BertConfig> c = ParseModelConfig(j.dump(), "m/config.json");
    ASSERT_FALSE(c.ok()) << type;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(c.status().message());
    EXPECT_TRUE(absl::StartsWith(message, "m/config.json: key \"model_type\" is ")) << message;
    EXPECT_TRUE(absl::StrContains(message, type.dump())) << message;
    EXPECT_TRUE(absl::StrContains(message, "known: bert")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_FALSE(ParseModelConfig("[1]", "m/config.json").ok());
  EXPECT_FALSE(ParseModelConfig("{", "m/config.json").ok());
  absl::StatusOr<BertConfig> missing = ReadModelConfig("/nonexistent/config.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "/nonexistent/config.json"));
}

// What model_family.h asks of every family, on its default-sized config and on a small one.
TEST(ModelFamilyRegistryTest, EveryFamilyRoundTripsItsConfigAndWeightNames) {
  for (const ModelFamily* family : AllModelFamilies()) {
    SCOPED_TRACE(std::string(family->model_type()));
    BertConfig small;
    small.model_type = std::string(family->model_type());
    small.hidden_size = 64;
    small.num_attention_heads = 4;
    small.num_hidden_layers = 3;
    small.intermediate_size = 96;
    small.vocab_size = 1000;
    small.relative_attention_num_buckets = 32;  // MPNet's key; the others' config.json lacks it
    const std::string json = family->ConfigToJson(small, "float32");
    absl::StatusOr<BertConfig> back = ParseModelConfig(json, "saved/config.json");
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
    EXPECT_EQ(&FamilyOf(*back), family);
    EXPECT_EQ(back->hidden_size, 64);
    EXPECT_EQ(back->num_hidden_layers, 3);
    EXPECT_EQ(back->vocab_size, 1000);

    const ParameterShapeList with = family->ParameterShapes(*back, /*with_pooler=*/true);
    const ParameterShapeList without = family->ParameterShapes(*back, /*with_pooler=*/false);
    // DistilBertModel has no pooler: with_pooler adds nothing.
    ASSERT_EQ(with.size() > without.size(), family->model_type() != "distilbert");
    std::set<std::string> names;
    for (const auto& [name, shape] : with) {
      EXPECT_TRUE(names.insert(name).second) << "twice: " << name;
      EXPECT_FALSE(shape.empty()) << name;
      EXPECT_EQ(family->ModuleName(family->FileName(name)), name);
    }
    for (const auto& [name, shape] : without) {
      EXPECT_FALSE(absl::StartsWith(name, "pooler.")) << name;
    }
    for (size_t i = without.size(); i < with.size(); ++i) {
      EXPECT_TRUE(absl::StartsWith(with[i].first, "pooler.")) << with[i].first;
    }
  }
}

TEST(BertFamilyTest, NamesWeightsAsTransformersBertModel) {
  const ModelFamily& bert = BertFamily();
  EXPECT_EQ(bert.architecture(), "BertModel");
  // BertForPreTraining / BertForMaskedLM names, legacy LayerNorm names, a saved buffer.
  EXPECT_EQ(bert.ModuleName("bert.encoder.layer.0.attention.self.query.weight"),
            "encoder.layer.0.attention.self.query.weight");
  EXPECT_EQ(bert.ModuleName("encoder.layer.1.output.LayerNorm.gamma"),
            "encoder.layer.1.output.LayerNorm.weight");
  EXPECT_EQ(bert.ModuleName("bert.embeddings.LayerNorm.beta"), "embeddings.LayerNorm.bias");
  EXPECT_EQ(bert.ModuleName("embeddings.position_ids"), "");
  EXPECT_EQ(bert.ModuleName("bert.embeddings.position_ids"), "");
  EXPECT_EQ(bert.ModuleName("cls.predictions.bias"), "cls.predictions.bias");  // unexpected
  EXPECT_EQ(bert.FileName("pooler.dense.weight"), "pooler.dense.weight");
  // transformers' BertModel of data/bert-tiny-random: its index names every parameter.
  const nlohmann::json index =
      nlohmann::json::parse(ReadAll(std::string(kModel) + "/model.safetensors.index.json"));
  absl::StatusOr<BertConfig> c = ReadModelConfig(std::string(kModel) + "/config.json");
  ASSERT_TRUE(c.ok()) << c.status();
  std::set<std::string> ours, theirs;
  for (const auto& [name, shape] : bert.ParameterShapes(*c)) ours.insert(bert.FileName(name));
  for (const auto& [name, file] : index.at("weight_map").items()) {
    const std::string module = bert.ModuleName(name);
    if (!module.empty()) theirs.insert(module);
  }
  EXPECT_EQ(ours, theirs);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
