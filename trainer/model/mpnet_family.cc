#include "trainer/model/mpnet_family.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "trainer/model/encoder_family.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr ConfigDialect kMpnetDialect = {"mpnet", "MPNetModel", /*token_types=*/false,
                                         /*padded_position_ids=*/true,
                                         /*relative_attention=*/true};

// Inside encoder.layer.N: MPNetModel's name, the shared encoder's (BertModel's) name.
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {".attention.attn.q.", ".attention.self.query."},
    {".attention.attn.k.", ".attention.self.key."},
    {".attention.attn.v.", ".attention.self.value."},
    {".attention.attn.o.", ".attention.output.dense."},
    {".attention.LayerNorm.", ".attention.output.LayerNorm."},
};

class MpnetFamilyImpl : public EncoderFamily {
 public:
  MpnetFamilyImpl() : EncoderFamily(kMpnetDialect) {}

  std::string ModuleName(absl::string_view file_name) const override {
    const std::string name = WithoutPrefix(file_name, "mpnet.");
    for (const auto& [file, module] : kLayerNames) {
      // A BertModel name in an MPNet checkpoint is no MPNetModel tensor: left unmatched.
      if (absl::StrContains(name, module)) return absl::StrCat("(not MPNetModel's) ", name);
    }
    for (const auto& [file, module] : kLayerNames) {
      if (absl::StrContains(name, file)) return absl::StrReplaceAll(name, {{file, module}});
    }
    return name;
  }
  std::string FileName(absl::string_view module_name) const override {
    for (const auto& [file, module] : kLayerNames) {
      if (absl::StrContains(module_name, module)) {
        return absl::StrReplaceAll(module_name, {{module, file}});
      }
    }
    return std::string(module_name);
  }
  // MPNetForSequenceClassification: mpnet (without pooler) -> MPNetClassificationHead on <s>.
  absl::string_view classifier_architecture() const override {
    return "MPNetForSequenceClassification";
  }
  absl::string_view base_model_prefix() const override { return "mpnet."; }
  ClassifierHead classifier_head() const override { return ClassifierHead::kDenseTanh; }
};

}  // namespace

const ModelFamily& MpnetFamily() {
  static const MpnetFamilyImpl* const kFamily = new MpnetFamilyImpl();
  return *kFamily;
}

}  // namespace trainer
}  // namespace tunefleet
