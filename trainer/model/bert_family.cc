#include "trainer/model/bert_family.h"

#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace tunefleet {
namespace trainer {
namespace {

class BertFamilyImpl : public ModelFamily {
 public:
  absl::string_view model_type() const override { return kBertModelType; }
  absl::string_view architecture() const override { return "BertModel"; }

  absl::StatusOr<BertConfig> ParseConfig(absl::string_view json,
                                         absl::string_view path) const override {
    return ParseBertConfig(json, path);
  }
  std::string ConfigToJson(const BertConfig& config, const std::string& dtype) const override {
    return BertConfigToJson(config, dtype);
  }

  ParameterShapeList ParameterShapes(const BertConfig& config, bool with_pooler) const override {
    return BertParameterShapes(config, with_pooler);
  }
  std::string ModuleName(absl::string_view file_name) const override {
    absl::string_view n = file_name;
    absl::ConsumePrefix(&n, "bert.");
    if (n == "embeddings.position_ids") return "";  // a buffer older checkpoints saved
    std::string name(n);
    for (const auto& [legacy, now] : {std::pair<const char*, const char*>{"LayerNorm.gamma",
                                                                           "LayerNorm.weight"},
                                      {"LayerNorm.beta", "LayerNorm.bias"}}) {
      if (absl::EndsWith(name, legacy)) name = name.substr(0, name.size() - strlen(legacy)) + now;
    }
    return name;
  }
  std::string FileName(absl::string_view module_name) const override {
    return std::string(module_name);
  }

  absl::StatusOr<WordPieceTokenizer> LoadTokenizer(const std::string& dir) const override {
    return WordPieceTokenizer::FromModelFolder(dir);
  }
  std::vector<std::string> TokenizerFiles() const override {
    return {"vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
            "added_tokens.json"};
  }
};

}  // namespace

const ModelFamily& BertFamily() {
  static const BertFamilyImpl* const kFamily = new BertFamilyImpl();
  return *kFamily;
}

}  // namespace trainer
}  // namespace tunefleet
