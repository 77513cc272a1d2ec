#include "common/py_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

// nlohmann::json rejects Python's non-finite tokens, so they are swapped (outside strings) for
// string sentinels before parsing and swapped back after. The sentinels start with a NUL
// character, which Python's json.dumps always escapes, so no journal string we write equals one.
const std::string kNanSentinel("\0tunefleet:NaN", 14);
const std::string kInfSentinel("\0tunefleet:Infinity", 19);
const std::string kNegInfSentinel("\0tunefleet:-Infinity", 20);

std::string ReplaceNonFiniteTokens(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 32);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (text.substr(i, 3) == "NaN") {
      out += "\"\\u0000tunefleet:NaN\"";
      i += 2;
    } else if (text.substr(i, 8) == "Infinity") {
      out += "\"\\u0000tunefleet:Infinity\"";
      i += 7;
    } else if (text.substr(i, 9) == "-Infinity") {
      out += "\"\\u0000tunefleet:-Infinity\"";
      i += 8;
    } else {
      out += c;
    }
  }
  return out;
}

// Turns sentinels back into doubles; false when one is used as an object key.
bool RestoreNonFinite(PyJson* j) {
  if (j->is_string()) {
    const std::string& s = j->get_ref<const std::string&>();
    if (s.empty() || s[0] != '\0') return true;
    if (s == kNanSentinel)
      *j = std::numeric_limits<double>::quiet_NaN();
    else if (s == kInfSentinel)
      *j = std::numeric_limits<double>::infinity();
    else if (s == kNegInfSentinel)
      *j = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (j->is_array()) {
    for (PyJson& e : *j) {
      if (!RestoreNonFinite(&e)) return false;
    }
  } else if (j->is_object()) {
    for (auto it = j->begin(); it != j->end(); ++it) {
      if (it.key() == kNanSentinel || it.key() == kInfSentinel || it.key() == kNegInfSentinel) {
        return false;
      }
      if (!RestoreNonFinite(&it.value())) return false;
    }
  }
  return true;
}

void DumpPyJson(const PyJson& j, std::string* out) {
  switch (j.type()) {
    // nlohmann writes these as Python does; floats and strings differ (repr, ensure_ascii).
    case PyJson::value_t::null:
    case PyJson::value_t::boolean:
    case PyJson::value_t::number_integer:
    case PyJson::value_t::number_unsigned:
      *out += j.dump();
      return;
    case PyJson::value_t::number_float:
      *out += JsonFloat(j.get<double>());
      return;
    case PyJson::value_t::string:
      *out += JsonString(j.get_ref<const std::string&>());
      return;
    case PyJson::value_t::array: {
      *out += '[';
      bool first = true;
      for (const PyJson& e : j) {
        if (!first) *out += ", ";
        first = false;
        DumpPyJson(e, out);
      }
      *out += ']';
      return;
    }
    case PyJson::value_t::object: {
      *out += '{';
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) *out += ", ";
        first = false;
        *out += JsonString(it.key());
        *out += ": ";
        DumpPyJson(it.value(), out);
      }
      *out += '}';
      return;
    }
    default:
      *out += "null";
      return;
  }
}

// Decodes one UTF-8 code point at text[*i], advancing *i; invalid bytes give U+FFFD.
uint32_t NextCodePoint(std::string_view text, size_t* i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(*i);
  if (c < 0x80) {
    ++*i;
    return c;
  }
  int len = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    ++*i;
    return 0xFFFD;
  }
  if (*i + len > text.size()) {
    ++*i;
    return 0xFFFD;
  }
  for (int k = 1; k < len; ++k) {
    const unsigned char cc = b(*i + k);
    if ((cc & 0xC0) != 0x80) {
      ++*i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return 0xFFFD;
  }
  *i += len;
  return cp;
}

void AppendUnicodeEscape(uint32_t unit, std::string* out) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\u%04x", unit);
  *out += buf;
}

}  // namespace

std::string JsonFloat(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  const bool negative = std::signbit(value);
  const double v = std::fabs(value);
  // The fewest significant digits that read back as v, and among those the nearest to v (as
  // Python's repr, David Gay's shortest mode): for each length, the correctly rounded digits,
  // else their neighbour towards v (at power-of-two boundaries only that one may round-trip).
  uint64_t mantissa = 0;  // v ~ mantissa * 10^scale
  int scale = 0;
  if (v != 0) {
    char buf[40];
    char candidate[48];
    const auto round_trips = [&](uint64_t m, int s) {
      std::snprintf(candidate, sizeof(candidate), "%llue%d", static_cast<unsigned long long>(m), s);
      return std::strtod(candidate, nullptr) == v;
    };
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof(buf), "%.*e", digits - 1, v);
      uint64_t m = 0;
      const char* p = buf;
      for (; *p != 'e'; ++p) {
        if (*p != '.') m = m * 10 + static_cast<uint64_t>(*p - '0');
      }
      const int s = std::atoi(p + 1) - (digits - 1);
      if (round_trips(m, s)) {
        mantissa = m, scale = s;
        break;
      }
      const uint64_t neighbour = std::strtod(buf, nullptr) < v ? m + 1 : m - 1;
      if (neighbour > 0 && round_trips(neighbour, s)) {
        mantissa = neighbour, scale = s;
        break;
      }
    }
  }
  std::string digits = std::to_string(mantissa);
  const int exponent = scale + static_cast<int>(digits.size()) - 1;  // of the first digit
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  // Python's repr: scientific notation when the exponent is < -4 or >= 16.
  std::string out = negative ? "-" : "";
  const int point = exponent + 1;  // digits before the decimal point
  if (mantissa != 0 && (exponent < -4 || exponent >= 16)) {
    out += digits[0];
    if (digits.size() > 1) absl::StrAppend(&out, ".", digits.substr(1));
    char e[16];
    std::snprintf(e, sizeof(e), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += e;
  } else if (mantissa == 0) {
    out += "0.0";
  } else if (point <= 0) {
    absl::StrAppend(&out, "0.", std::string(-point, '0'), digits);
  } else if (point >= static_cast<int>(digits.size())) {
    absl::StrAppend(&out, digits, std::string(point - digits.size(), '0'), ".0");
  } else {
    absl::StrAppend(&out, digits.substr(0, point), ".", digits.substr(point));
  }
  return out;
}

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size()) {
    const uint32_t cp = NextCodePoint(text, &i);
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (cp >= 0x20 && cp <= 0x7E) {
      out += static_cast<char>(cp);
    } else if (cp < 0x10000) {
      AppendUnicodeEscape(cp, &out);
    } else {
      const uint32_t v = cp - 0x10000;
      AppendUnicodeEscape(0xD800 | (v >> 10), &out);
      AppendUnicodeEscape(0xDC00 | (v & 0x3FF), &out);
    }
  }
  out += '"';
  return out;
}

namespace {

// How deep the text's arrays and objects nest (brackets outside strings); stops counting past
// `limit`.
int NestingDepth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size() && deepest <= limit; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

absl::StatusOr<PyJson> ParsePyJson(std::string_view text) {
  // Deeper JSON would overflow the stack of the recursive walks over it (a journal line nested
  // 100,000 deep crashed hpo); Python's json.loads stops near this depth too (RecursionError).
  if (NestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid JSON (nested more than ", kMaxJsonDepth, " deep)"));
  }
  PyJson out;
  try {
    out = PyJson::parse(ReplaceNonFiniteTokens(text));
  } catch (const PyJson::exception& e) {
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) {
      what = what.substr(bracket + 2);
    }
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON (", what, ")"));
  }
  if (!RestoreNonFinite(&out)) {
    return absl::InvalidArgumentError("not valid JSON (NaN or Infinity as an object key)");
  }
  return out;
}

std::string DumpPyJson(const PyJson& j) {
  std::string out;
  DumpPyJson(j, &out);
  return out;
}

absl::StatusOr<std::string> NormalizeJson(std::string_view text) {
  absl::StatusOr<PyJson> j = ParsePyJson(text);
  if (!j.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(text), "' is ", j.status().message()));
  }
  return DumpPyJson(*j);
}

}  // namespace tunefleet
