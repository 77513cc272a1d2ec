#include "trainer/model/encoder_family.h"

#include <utility>

#include "absl/strings/strip.h"

namespace tunefleet {
namespace trainer {

EncoderFamily::EncoderFamily(const ConfigDialect& dialect) : dialect_(dialect) {}

absl::StatusOr<BertConfig> EncoderFamily::ParseConfig(absl::string_view json,
                                                      absl::string_view path) const {
  return ParseEncoderConfig(json, path, dialect_);
}

std::string EncoderFamily::ConfigToJson(const BertConfig& config, const std::string& dtype) const {
  return EncoderConfigToJson(config, dtype, dialect_);
}

ParameterShapeList EncoderFamily::ParameterShapes(const BertConfig& config,
                                                  bool with_pooler) const {
  return BertParameterShapes(config, with_pooler);
}

std::string EncoderFamily::FileName(absl::string_view module_name) const {
  return std::string(module_name);
}

std::string EncoderFamily::WithoutPrefix(absl::string_view file_name, absl::string_view prefix) {
  absl::ConsumePrefix(&file_name, prefix);
  if (file_name == "embeddings.position_ids") return "";
  return std::string(file_name);
}

}  // namespace trainer
}  // namespace tunefleet
