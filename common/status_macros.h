// Status helpers for code that returns absl::Status / absl::StatusOr (Debian's Abseil 20220623
// has no status macros of its own).
//
//   RETURN_IF_ERROR(DoThing());            // returns the non-OK status to the caller
//   ASSIGN_OR_RETURN(Config c, Load(p));   // declares `c`, or returns the error
//   status = AssignOrStatus(Find(), &path); // keeps the first error of a validation chain
#ifndef TUNEFLEET_COMMON_STATUS_MACROS_H_
#define TUNEFLEET_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TF_STATUS_CONCAT_INNER_(a, b) a##b
#define TF_STATUS_CONCAT_(a, b) TF_STATUS_CONCAT_INNER_(a, b)

#ifndef RETURN_IF_ERROR
#define RETURN_IF_ERROR(expr)                \
  do {                                       \
    ::absl::Status tf_status_ = (expr);      \
    if (!tf_status_.ok()) return tf_status_; \
  } while (0)
#endif

#ifndef ASSIGN_OR_RETURN
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  TF_ASSIGN_OR_RETURN_IMPL_(TF_STATUS_CONCAT_(tf_statusor_, __LINE__), lhs, rexpr)
#define TF_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                              \
  if (!statusor.ok()) return statusor.status();         \
  lhs = std::move(statusor).value()
#endif

namespace tunefleet {

// Moves `result`'s value into *out when it holds one (else leaves *out alone); returns its
// status either way. For flag checks that collect the first error in one Status:
//   if (status.ok() && trainer.empty()) {
//     status = AssignOrStatus(FindSiblingBinary("trainer/trainer"), &trainer);
//   }
template <typename T>
absl::Status AssignOrStatus(absl::StatusOr<T> result, T* out) {
  if (!result.ok()) return result.status();
  *out = *std::move(result);
  return absl::OkStatus();
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_STATUS_MACROS_H_
