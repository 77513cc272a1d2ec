#include "trainer/model/all_families.h"

#include "trainer/model/bert_family.h"
#include "trainer/model/distilbert_family.h"
#include "trainer/model/mpnet_family.h"
#include "trainer/model/roberta_family.h"

namespace tunefleet {
namespace trainer {

const std::vector<const ModelFamily*>& AllModelFamilies() {
  static const auto* const kFamilies = new std::vector<const ModelFamily*>{
      &BertFamily(), &RobertaFamily(), &XlmRobertaFamily(), &MpnetFamily(), &DistilBertFamily(),
  };
  return *kFamilies;
}

}  // namespace trainer
}  // namespace tunefleet
