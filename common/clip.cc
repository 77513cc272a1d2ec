#include "common/clip.h"

namespace tunefleet {

std::string ClipValue(std::string_view value, size_t max_bytes) {
  if (value.size() <= max_bytes) return std::string(value);
  size_t keep = max_bytes;
  // Back up over UTF-8 continuation bytes so that no character is cut in two.
  while (keep > 0 && (static_cast<unsigned char>(value[keep]) & 0xC0) == 0x80) --keep;
  return std::string(value.substr(0, keep)) + "... (" + std::to_string(value.size()) + " bytes)";
}

}  // namespace tunefleet
