#include "trainer/model/autocast.h"

#include <optional>

#include <ATen/autocast_mode.h>

#include "absl/strings/str_cat.h"
#include "trainer/model/enum_names.h"
#include "trainer/torch_version.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr EnumName<Precision> kPrecisionNames[] = {
    {Precision::kFp32, "fp32"}, {Precision::kBf16, "bf16"}, {Precision::kFp16, "fp16"}};

bool IsEnabled(torch::DeviceType type) {
#if TF_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(type);
#else
  return type == torch::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

void SetEnabled(torch::DeviceType type, bool enabled, at::ScalarType dtype) {
#if TF_TORCH_AT_LEAST(2, 4)
  if (enabled) at::autocast::set_autocast_dtype(type, dtype);
  at::autocast::set_autocast_enabled(type, enabled);
#else
  if (type == torch::kCUDA) {
    if (enabled) at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  } else {
    if (enabled) at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

}  // namespace

Precision CurrentAutocast(torch::DeviceType device_type) {
  if (!IsEnabled(device_type)) return Precision::kFp32;
#if TF_TORCH_AT_LEAST(2, 4)
  const at::ScalarType dtype = at::autocast::get_autocast_dtype(device_type);
#else
  const at::ScalarType dtype = device_type == torch::kCUDA ? at::autocast::get_autocast_gpu_dtype()
                                                           : at::autocast::get_autocast_cpu_dtype();
#endif
  return dtype == at::kHalf ? Precision::kFp16 : Precision::kBf16;
}

absl::StatusOr<Precision> ParsePrecision(absl::string_view name) {
  if (std::optional<Precision> precision = EnumFromName(kPrecisionNames, name)) return *precision;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown precision \"", name, "\" (expected fp32, bf16 or fp16)"));
}

const char* PrecisionName(Precision precision) {
  return NameOfEnum(kPrecisionNames, precision, /*unknown=*/"fp32");
}

bool PrecisionSupported(torch::DeviceType device_type, Precision precision) {
  return precision != Precision::kFp16 || device_type == torch::kCUDA;
}

AutocastScope::AutocastScope(torch::DeviceType device_type, Precision precision)
    : type_(device_type), enabled_(precision != Precision::kFp32) {
  if (!enabled_) return;
  was_enabled_ = IsEnabled(type_);
  at::autocast::set_autocast_cache_enabled(false);
  SetEnabled(type_, true, precision == Precision::kBf16 ? at::kBFloat16 : at::kHalf);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (!was_enabled_) SetEnabled(type_, false, at::kFloat);
}

}  // namespace trainer
}  // namespace tunefleet
