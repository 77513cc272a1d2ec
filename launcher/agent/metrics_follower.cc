#include "launcher/agent/metrics_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/clip.h"
#include "common/py_json.h"

namespace tunefleet {
namespace launcher {
namespace {

// An integer >= 0 (a float with no fraction passes), or an error naming `key`.
absl::StatusOr<int64_t> Count(const PyJson& j, const char* key) {
  const PyJson& v = j.at(key);
  if (v.is_number_integer()) {
    const int64_t n = v.get<int64_t>();
    if (n >= 0) return n;
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= 0 && d < 9e18 && d == std::floor(d)) return static_cast<int64_t>(d);
  }
  return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not an integer >= 0"));
}

}  // namespace

absl::StatusOr<comm::Report> ParseReportLine(const std::string& line) {
  absl::StatusOr<PyJson> j = ParsePyJson(line);
  if (!j.ok()) return absl::InvalidArgumentError(j.status().message());
  if (!j->is_object()) return absl::InvalidArgumentError("not a JSON object");
  const bool has_step = j->contains("step"), has_samples = j->contains("samples");
  if (!has_step && !has_samples) return absl::InvalidArgumentError("has neither step nor samples");
  comm::Report r;
  if (has_step) {
    absl::StatusOr<int64_t> step = Count(*j, "step");
    if (!step.ok()) return step.status();
    r.set_step(*step);
  }
  if (has_samples) {
    absl::StatusOr<int64_t> samples = Count(*j, "samples");
    if (!samples.ok()) return samples.status();
    r.set_samples(*samples);
    if (!has_step) r.set_step(*samples);
  } else {
    r.set_samples(r.step());
  }
  for (const auto& [key, value] : j->items()) {
    if (key == "step" || key == "samples" || !value.is_number() || value.is_boolean()) continue;
    if (key.empty() || key.size() > 256) continue;
    if (r.metrics_size() >= static_cast<int>(kMaxMetricsPerLine)) {
      return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxMetricsPerLine, " metrics"));
    }
    (*r.mutable_metrics())[key] = value.get<double>();
  }
  return r;
}

absl::StatusOr<std::unique_ptr<MetricsFollower>> MetricsFollower::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", ClipPath(path), ": ", std::strerror(errno)));
  }
  return std::unique_ptr<MetricsFollower>(new MetricsFollower(fd));
}

MetricsFollower::~MetricsFollower() {
  if (fd_ >= 0) ::close(fd_);
}

void MetricsFollower::Warn(const std::string& why, Lines& out) {
  ++warnings_;
  if (warnings_ <= kMaxWarnings) {
    out.warnings.push_back(absl::StrCat("TUNEFLEET_METRICS line ", line_, ": ", why, "; skipped"));
  }
  if (warnings_ == kMaxWarnings) {
    out.warnings.push_back("TUNEFLEET_METRICS: further bad lines are skipped without a word");
  }
}

void MetricsFollower::TakeLine(const std::string& line, Lines& out) {
  ++line_;
  if (absl::StripAsciiWhitespace(line).empty()) return;
  absl::StatusOr<comm::Report> r = ParseReportLine(line);
  if (r.ok()) {
    out.reports.push_back(*std::move(r));
    return;
  }
  Warn(absl::StrCat(r.status().message(), ": '", ClipValue(line, 80), "'"), out);
}

MetricsFollower::Lines MetricsFollower::Poll(bool at_end) {
  Lines out;
  struct stat st;
  if (::fstat(fd_, &st) == 0 && st.st_size < offset_) {  // cut shorter: read it again
    offset_ = 0;
    partial_.clear();
    skipping_ = false;
  }
  char buf[65536];
  for (size_t read = 0; at_end || read < kMaxPollBytes;) {
    const ssize_t n = ::pread(fd_, buf, sizeof(buf), offset_);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    offset_ += n;
    read += static_cast<size_t>(n);
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        if (skipping_) continue;
        partial_.push_back(buf[i]);
        if (partial_.size() > kMaxLineBytes) {
          ++line_;
          Warn(absl::StrCat("longer than ", kMaxLineBytes / 1024, " KiB"), out);
          --line_;  // counted when its newline comes
          partial_.clear();
          skipping_ = true;
        }
        continue;
      }
      if (skipping_) {
        ++line_;
        skipping_ = false;
      } else {
        TakeLine(partial_, out);
      }
      partial_.clear();
    }
  }
  if (at_end && !partial_.empty()) {
    TakeLine(partial_, out);
    partial_.clear();
  }
  return out;
}

}  // namespace launcher
}  // namespace tunefleet
