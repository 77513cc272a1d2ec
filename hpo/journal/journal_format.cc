#include "hpo/journal/journal_format.h"

#include <time.h>

#include <cctype>
#include <cstdio>

namespace tunefleet {
namespace hpo {

std::string OptunaDatetimeNow() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  localtime_r(&ts.tv_sec, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06ld", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long>(ts.tv_nsec / 1000));
  return buf;
}

bool IsOptunaDatetime(const std::string& s) {
  // YYYY-MM-DDTHH:MM:SS.ffffff
  static constexpr char kPattern[] = "dddd-dd-ddTdd:dd:dd.dddddd";
  if (s.size() != sizeof(kPattern) - 1) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (kPattern[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i]))
                           : s[i] != kPattern[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace hpo
}  // namespace tunefleet
