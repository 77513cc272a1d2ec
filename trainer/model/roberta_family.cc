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
