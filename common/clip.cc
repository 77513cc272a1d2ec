#include "common/clip.h"

#include <cstdio>

namespace tunefleet {

std::string ClipValue(std::string_view value, size_t max_bytes) {
  if (value.size() <= max_bytes) return std::string(value);
  size_t keep = max_bytes;
  // Back up over UTF-8 continuation bytes so that no character is cut in two.
  while (keep > 0 && (static_cast<unsigned char>(value[keep]) & 0xC0) == 0x80) --keep;
  return std::string(value.substr(0, keep)) + "... (" + std::to_string(value.size()) + " bytes)";
}

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char hex[8];
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      std::snprintf(hex, sizeof(hex), "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += hex;
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace tunefleet
