// One table of a small enum's values and their names (the spellings of the trainer YAML and
// flags) serves both directions, so that parsing a name and printing a value cannot disagree:
//
//   constexpr EnumName<Pooling> kPoolingNames[] = {
//       {Pooling::kMean, "mean"}, {Pooling::kCls, "cls"}, {Pooling::kMax, "max"}};
//   std::optional<Pooling> p = EnumFromName(kPoolingNames, "cls");  // Pooling::kCls
//   const char* name = NameOfEnum(kPoolingNames, Pooling::kMax, /*unknown=*/"?");  // "max"
//
// Callers word their own error for an unknown name. Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_MODEL_ENUM_NAMES_H_
#define TUNEFLEET_TRAINER_MODEL_ENUM_NAMES_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The value that `table` names `name` (exact match); nullopt when none.
template <typename E, size_t N>
std::optional<E> EnumFromName(const EnumName<E> (&table)[N], absl::string_view name) {
  for (const EnumName<E>& entry : table) {
    if (name == entry.name) return entry.value;
  }
  return std::nullopt;
}

// The name of `value` in `table`; `unknown` for a value the table lacks.
template <typename E, size_t N>
const char* NameOfEnum(const EnumName<E> (&table)[N], E value, const char* unknown) {
  for (const EnumName<E>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return unknown;
}

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_ENUM_NAMES_H_
