#include "common/number_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/py_json.h"

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
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return JsonFloat(value);  // json.dumps of a float is its repr
}

}  // namespace tunefleet
