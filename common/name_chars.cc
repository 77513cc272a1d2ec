#include "common/name_chars.h"

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"

namespace tunefleet {

bool AllAlnumOr(std::string_view text, std::string_view extra) {
  return absl::c_all_of(text, [extra](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           extra.find(c) != std::string_view::npos;
  });
}

}  // namespace tunefleet
