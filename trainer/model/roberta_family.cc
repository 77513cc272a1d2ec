#include "trainer/model/roberta_family.h"

#include "trainer/model/encoder_family.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr ConfigDialect kRobertaDialect = {"roberta", "RobertaModel", /*token_types=*/true,
                                           /*padded_position_ids=*/true};
constexpr ConfigDialect kXlmRobertaDialect = {"xlm-roberta", "XLMRobertaModel",
                                              /*token_types=*/true,
                                              /*padded_position_ids=*/true};

class RobertaFamilyImpl : public EncoderFamily {
 public:
  using EncoderFamily::EncoderFamily;

  std::string ModuleName(absl::string_view file_name) const override {
    return WithoutPrefix(file_name, "roberta.");
  }
  // RobertaForSequenceClassification, XLMRobertaForSequenceClassification: roberta (without
  // pooler) -> RobertaClassificationHead on the <s> token.
  absl::string_view classifier_architecture() const override {
    return model_type() == kRobertaDialect.model_type ? "RobertaForSequenceClassification"
                                                      : "XLMRobertaForSequenceClassification";
  }
  absl::string_view base_model_prefix() const override { return "roberta."; }
  ClassifierHead classifier_head() const override { return ClassifierHead::kDenseTanh; }
};

}  // namespace

const ModelFamily& RobertaFamily() {
  static const RobertaFamilyImpl* const kFamily = new RobertaFamilyImpl(kRobertaDialect);
  return *kFamily;
}

const ModelFamily& XlmRobertaFamily() {
  static const RobertaFamilyImpl* const kFamily = new RobertaFamilyImpl(kXlmRobertaDialect);
  return *kFamily;
}

}  // namespace trainer
}  // namespace tunefleet
