#include "hpo/report/report_writer.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/shell_quote.h"
#include "hpo/invocation.h"
#include "hpo/report/report.h"

namespace tunefleet {
namespace hpo {

ReportWriter::ReportWriter(std::string journal_path, std::string html_path, absl::Duration interval)
    : journal_path_(std::move(journal_path)),
      html_path_(std::move(html_path)),
      interval_(interval) {}

ReportWriter::~ReportWriter() { Join(); }

void ReportWriter::Join() {
  if (thread_.joinable()) thread_.join();
}

absl::Status ReportWriter::Write(const JournalContents& contents) {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> html = RenderHtmlReport(contents, journal_path_);
  absl::Status s = html.ok() ? WriteFileAtomically(html_path_, *html, ReportModeFor(journal_path_))
                             : html.status();
  last_write_us_.store(absl::ToInt64Microseconds(absl::Now() - start));
  if (!s.ok() && !warned_.exchange(true)) {
    TF_LOG(WARNING) << "cannot write the sweep's HTML report " << html_path_ << ": " << s.message()
                    << " (the sweep goes on; `" << HpoInvocation() << " report --journal "
                    << ShellQuote(journal_path_) << "` writes it later)";
  }
  return s;
}

void ReportWriter::Tick(absl::Time now, const std::function<JournalContents()>& snapshot) {
  const absl::Duration spacing =
      std::max(interval_, 10 * absl::Microseconds(last_write_us_.load()));
  if (!dirty_ || now < last_start_ + spacing) return;
  Join();  // the last write started an interval ago: done, or nearly
  dirty_ = false;
  last_start_ = now;
  auto contents = std::make_shared<JournalContents>(snapshot());
  thread_ = std::thread([this, contents] { (void)Write(*contents); });
}

absl::Status ReportWriter::Flush(const JournalContents& contents) {
  Join();
  dirty_ = false;
  return Write(contents);
}

}  // namespace hpo
}  // namespace tunefleet
