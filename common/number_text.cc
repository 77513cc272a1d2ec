#include "common/number_text.h"

#include <cstdio>
#include <cstdlib>

namespace tunefleet {

std::string ShortestText(double value) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string PythonRepr(double value) {
  std::string s = ShortestText(value);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

}  // namespace tunefleet
