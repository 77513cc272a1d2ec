// Hugging Face model folders (trainer/model/hf_model_folder.h, trainer/model/bert_config.h,
// trainer/model/st_modules.h): the sharded bert-tiny-random checkpoint, the "bert."-prefixed layout
// with extra heads, f16/bf16 weights, save -> load bit-identical, the sentence-transformers
// files, and one-line errors naming the file for each broken folder.
#include "trainer/model/hf_model_folder.h"

#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/trainer/testing/trainer_test_util.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/model_family_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kModel[] = "data/bert-tiny-random";

// A fresh, empty folder named after this test.
std::string Folder(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name +
                    "_XXXXXX";
  EXPECT_NE(mkdtemp(dir.data()), nullptr) << dir;
  return dir;
}

// A folder with the reference config.json and these tensors in model.safetensors.
std::string FolderWith(const std::string& name,
                       const std::map<std::string, torch::Tensor>& tensors) {
  const std::string dir = Folder(name);
  WriteTinyBertFolder(dir, tensors);
  return dir;
}

void ExpectSameTensors(const std::map<std::string, torch::Tensor>& got,
                       const std::map<std::string, torch::Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, t] : want) {
    ASSERT_EQ(got.count(name), 1u) << name;
    EXPECT_TRUE(torch::equal(got.at(name), t)) << name;
  }
}

void ExpectError(const absl::StatusOr<BertCheckpoint>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok());
  const std::string message(r.status().message());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& part : parts) {
    EXPECT_TRUE(absl::StrContains(message, part)) << message << " / wanted: " << part;
  }
}

TEST(CheckpointTest, LoadsTheShardedReferenceCheckpoint) {
  const BertCheckpoint& c = TinyBertCheckpoint();
  EXPECT_EQ(c.config.vocab_size, 30522);
  EXPECT_EQ(c.config.hidden_size, 128);
  EXPECT_EQ(c.config.num_hidden_layers, 2);
  EXPECT_EQ(c.config.num_attention_heads, 2);
  EXPECT_EQ(c.config.intermediate_size, 512);
  EXPECT_EQ(c.config.hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(c.config.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.weight_files.size(), 2u);
  EXPECT_TRUE(c.unexpected_keys.empty());
  EXPECT_TRUE(c.missing_keys.empty());
  EXPECT_TRUE(c.has_pooler);
  EXPECT_EQ(c.pooling, "");
  const auto shapes = BertParameterShapes(c.config);
  ASSERT_EQ(c.tensors.size(), shapes.size());
  for (const auto& [name, shape] : shapes) {
    EXPECT_EQ(c.tensors.at(name).sizes().vec(), shape) << name;
    EXPECT_EQ(c.tensors.at(name).scalar_type(), torch::kFloat32) << name;
  }
}

// Real checkpoints (bert-base-uncased) carry "bert." and extra heads: the heads are unexpected.
TEST(CheckpointTest, LoadsBertPrefixedNamesAndReportsExtraHeads) {
  std::map<std::string, torch::Tensor> prefixed;
  for (const auto& [name, t] : TinyBertCheckpoint().tensors) prefixed["bert." + name] = t;
  prefixed["cls.predictions.bias"] = torch::zeros({30522});
  prefixed["cls.predictions.transform.dense.weight"] = torch::zeros({128, 128});
  prefixed["bert.embeddings.position_ids"] = torch::arange(512).unsqueeze(0);  // ignored
  auto c = LoadBertCheckpoint(FolderWith("prefixed", prefixed));
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectSameTensors(c->tensors, TinyBertCheckpoint().tensors);
  EXPECT_EQ(
      c->unexpected_keys,
      (std::vector<std::string>{"cls.predictions.bias", "cls.predictions.transform.dense.weight"}));
  EXPECT_TRUE(c->missing_keys.empty());
}

TEST(CheckpointTest, MissingPoolerIsReportedNotFatal) {
  std::map<std::string, torch::Tensor> tensors = TinyBertCheckpoint().tensors;
  tensors.erase("pooler.dense.weight");
  tensors.erase("pooler.dense.bias");
  auto c = LoadBertCheckpoint(FolderWith("nopooler", tensors));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->has_pooler);
  EXPECT_EQ(c->missing_keys,
            (std::vector<std::string>{"pooler.dense.bias", "pooler.dense.weight"}));
}

TEST(CheckpointTest, HalfAndBfloat16WeightsLoadAsFloat32) {
  std::map<std::string, torch::Tensor> mixed = TinyBertCheckpoint().tensors;
  std::map<std::string, torch::Tensor> want = mixed;
  int i = 0;
  for (auto& [name, t] : mixed) {
    const torch::Dtype dtype = i++ % 2 == 0 ? torch::kFloat16 : torch::kBFloat16;
    t = t.to(dtype);
    want[name] = t.to(torch::kFloat32);
  }
  auto c = LoadBertCheckpoint(FolderWith("half", mixed));
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectSameTensors(c->tensors, want);
}

TEST(CheckpointTest, SaveThenLoadIsBitIdenticalAndCopiesTheTokenizer) {
  const std::string dir = Folder("saved") + "/nested/out";
  CheckpointSaveOptions options;
  options.source_dir = kModel;
  ASSERT_TRUE(
      SaveBertCheckpoint(dir, TinyBertCheckpoint().config, TinyBertCheckpoint().tensors, options)
          .ok());
  auto c = LoadBertCheckpoint(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  ExpectSameTensors(c->tensors, TinyBertCheckpoint().tensors);
  EXPECT_EQ(c->weight_files, std::vector<std::string>{dir + "/model.safetensors"});
  EXPECT_EQ(c->config.hidden_size, 128);
  EXPECT_EQ(c->config.hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(c->config.layer_norm_eps, 1e-12);
  EXPECT_EQ(ReadAll(dir + "/vocab.txt"), ReadAll(std::string(kModel) + "/vocab.txt"));
  EXPECT_EQ(ReadAll(dir + "/tokenizer.json"), ReadAll(std::string(kModel) + "/tokenizer.json"));
  const std::string config = ReadAll(dir + "/config.json");
  EXPECT_TRUE(absl::StrContains(config, "\"architectures\": [\n    \"BertModel\"\n  ]")) << config;
  EXPECT_TRUE(absl::StrContains(config, "\"transformers_version\": \"5.17.0\"")) << config;
  // Saving again writes the same bytes; the safetensors metadata is {"format": "pt"}.
  const std::string first = ReadAll(dir + "/model.safetensors");
  ASSERT_TRUE(SaveBertCheckpoint(dir, c->config, c->tensors).ok());
  EXPECT_TRUE(first == ReadAll(dir + "/model.safetensors"));
  auto raw = ReadSafetensors(dir + "/model.safetensors");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
}

TEST(CheckpointTest, SentenceTransformersPoolingIsWrittenAndRead) {
  const std::string dir = Folder("st");
  CheckpointSaveOptions options;
  options.pooling = "cls";
  ASSERT_TRUE(
      SaveBertCheckpoint(dir, TinyBertCheckpoint().config, TinyBertCheckpoint().tensors, options)
          .ok());
  auto c = LoadBertCheckpoint(dir);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pooling, "cls");
  EXPECT_FALSE(c->normalize);
  EXPECT_EQ(c->max_seq_length, 128);
  // A copy made with `dir` as the source keeps its sentence-transformers files.
  const std::string copy = Folder("st_copy");
  CheckpointSaveOptions copy_options;
  copy_options.source_dir = dir;
  ASSERT_TRUE(SaveBertCheckpoint(copy, c->config, c->tensors, copy_options).ok());
  auto c2 = LoadBertCheckpoint(copy);
  ASSERT_TRUE(c2.ok()) << c2.status();
  EXPECT_EQ(c2->pooling, "cls");
  options.pooling = "sum";
  EXPECT_FALSE(SaveBertCheckpoint(Folder("bad"), c->config, c->tensors, options).ok());
}

TEST(CheckpointTest, MissingFolderAndFilesAreNamed) {
  ExpectError(LoadBertCheckpoint("/nonexistent/model"), {"/nonexistent/model", "no such"});
  const std::string empty = Folder("empty");
  ExpectError(LoadBertCheckpoint(empty), {empty + "/config.json", "cannot open"});
  WriteAll(empty + "/config.json", ReadAll(std::string(kModel) + "/config.json"));
  ExpectError(LoadBertCheckpoint(empty), {empty, "model.safetensors", "index.json"});
}

TEST(CheckpointTest, MalformedConfigNamesFileAndKey) {
  const std::string base = ReadAll(std::string(kModel) + "/config.json");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"{\"hidden_size\": 128,", {"config.json", "invalid JSON"}},
      {with("\"hidden_size\": 128,", ""), {"config.json", "\"hidden_size\"", "missing"}},
      {with("\"hidden_size\": 128", "\"hidden_size\": \"big\""), {"\"hidden_size\"", "integer"}},
      {with("\"hidden_size\": 128", "\"hidden_size\": 128.5"), {"\"hidden_size\"", "integer"}},
      {with("\"num_attention_heads\": 2", "\"num_attention_heads\": 3"),
       {"\"num_attention_heads\"", "must divide hidden_size"}},
      {with("\"layer_norm_eps\": 1e-12", "\"layer_norm_eps\": \"x\""), {"\"layer_norm_eps\""}},
      {with("\"hidden_act\": \"gelu\"", "\"hidden_act\": \"gelu_42\""),
       {"\"hidden_act\"", "gelu_42"}},
      {with("\"hidden_dropout_prob\": 0.1", "\"hidden_dropout_prob\": 2"),
       {"\"hidden_dropout_prob\""}},
      {with("\"vocab_size\": 30522", "\"vocab_size\": -5"), {"\"vocab_size\"", ">= 1"}},
      {with("\"model_type\": \"bert\"", "\"model_type\": \"gpt2\""), {"\"model_type\"", "gpt2"}},
      {with("\"pad_token_id\": 0", "\"pad_token_id\": null"), {"\"pad_token_id\""}},
      {"[1, 2]", {"config.json", "object"}},
  };
  for (const auto& [text, parts] : cases) {
    auto c = ParseModelConfig(text, "m/config.json");  // the registry, then BERT's parser
    ASSERT_FALSE(c.ok()) << text;
    const std::string message(c.status().message());
    EXPECT_TRUE(absl::StartsWith(message, "m/config.json: ")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& part : parts) {
      EXPECT_TRUE(absl::StrContains(message, part)) << message << " / wanted: " << part;
    }
  }
}

TEST(CheckpointTest, WrongShapeNamesTensorAndBothShapes) {
  std::map<std::string, torch::Tensor> tensors = TinyBertCheckpoint().tensors;
  tensors["encoder.layer.1.intermediate.dense.weight"] = torch::zeros({256, 128});
  const std::string dir = FolderWith("shape", tensors);
  ExpectError(LoadBertCheckpoint(dir),
              {dir + "/model.safetensors", "encoder.layer.1.intermediate.dense.weight",
               "[256, 128]", "[512, 128]"});
}

TEST(CheckpointTest, MissingEncoderWeightIsAnError) {
  std::map<std::string, torch::Tensor> tensors = TinyBertCheckpoint().tensors;
  tensors.erase("encoder.layer.0.output.LayerNorm.bias");
  ExpectError(LoadBertCheckpoint(FolderWith("missing", tensors)),
              {"encoder.layer.0.output.LayerNorm.bias", "lack 1"});
}

TEST(CheckpointTest, TruncatedSafetensorsNamesTheFile) {
  const std::string dir = Folder("truncated");
  WriteAll(dir + "/config.json", ReadAll(std::string(kModel) + "/config.json"));
  const std::string bytes = ReadAll(std::string(kModel) + "/model-00002-of-00002.safetensors");
  WriteAll(dir + "/model.safetensors", bytes.substr(0, bytes.size() - 100));
  ExpectError(LoadBertCheckpoint(dir), {dir + "/model.safetensors", "truncated"});
  WriteAll(dir + "/model.safetensors", bytes.substr(0, 5));
  ExpectError(LoadBertCheckpoint(dir), {dir + "/model.safetensors", "8-byte"});
}

TEST(CheckpointTest, BrokenShardIndexIsNamed) {
  const std::string dir = Folder("index");
  const std::string src = kModel;
  WriteAll(dir + "/config.json", ReadAll(src + "/config.json"));
  for (const char* shard :
       {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
    WriteAll(dir + "/" + shard, ReadAll(src + "/" + shard));
  }
  const std::string index = ReadAll(src + "/model.safetensors.index.json");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = index;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos);
    return text.replace(at, from.size(), to);
  };
  WriteAll(dir + "/model.safetensors.index.json", index);
  auto ok = LoadBertCheckpoint(dir);
  ASSERT_TRUE(ok.ok()) << ok.status();
  ExpectSameTensors(ok->tensors, TinyBertCheckpoint().tensors);
  // A tensor mapped to the wrong shard.
  WriteAll(dir + "/model.safetensors.index.json",
           with("\"embeddings.word_embeddings.weight\": \"model-00001",
                "\"embeddings.word_embeddings.weight\": \"model-00002"));
  ExpectError(LoadBertCheckpoint(dir), {"model-0000", "embeddings.word_embeddings.weight"});
  // A shard that is not there.
  WriteAll(dir + "/model.safetensors.index.json",
           with("\"embeddings.word_embeddings.weight\": \"model-00001-of-00002",
                "\"embeddings.word_embeddings.weight\": \"model-00003-of-00002"));
  ExpectError(LoadBertCheckpoint(dir), {dir + "/model-00003-of-00002.safetensors", "cannot open"});
  WriteAll(dir + "/model.safetensors.index.json", "{\"weight_map\": 3}");
  ExpectError(LoadBertCheckpoint(dir), {"model.safetensors.index.json", "weight_map"});
  WriteAll(dir + "/model.safetensors.index.json", "{\"weight_map\": {\"x\": \"../secret\"}}");
  ExpectError(LoadBertCheckpoint(dir), {"model.safetensors.index.json", "file name"});
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
