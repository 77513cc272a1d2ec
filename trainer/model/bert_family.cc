#include "trainer/model/bert_family.h"

#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "trainer/model/encoder_family.h"

namespace tunefleet {
namespace trainer {
namespace {

class BertFamilyImpl : public EncoderFamily {
 public:
  BertFamilyImpl() : EncoderFamily(kBertDialect) {}

  std::string ModuleName(absl::string_view file_name) const override {
    std::string name = WithoutPrefix(file_name, "bert.");
    for (const auto& [legacy, now] :
         {std::pair<const char*, const char*>{"LayerNorm.gamma", "LayerNorm.weight"},
          {"LayerNorm.beta", "LayerNorm.bias"}}) {
      if (absl::EndsWith(name, legacy)) name = name.substr(0, name.size() - strlen(legacy)) + now;
    }
    return name;
  }
  // BertForSequenceClassification: bert (with its pooler) -> dropout -> classifier.
  absl::string_view classifier_architecture() const override {
    return "BertForSequenceClassification";
  }
  absl::string_view base_model_prefix() const override { return "bert."; }
  ClassifierHead classifier_head() const override { return ClassifierHead::kPooler; }
};

}  // namespace

const ModelFamily& BertFamily() {
  static const BertFamilyImpl* const kFamily = new BertFamilyImpl();
  return *kFamily;
}

}  // namespace trainer
}  // namespace tunefleet
