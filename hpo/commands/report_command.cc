#include "hpo/commands/report_command.h"

#include <cstdint>
#include <iostream>

#include "absl/status/status.h"
#include "common/cli.h"
#include "hpo/config/sweep_config.h"
#include "hpo/report/report.h"

namespace tunefleet {
namespace hpo {

int RunReport(const ReportOptions& o) {
  std::string journal = o.journal, output = o.output;
  if (journal.empty() && !o.sweep_file.empty()) {
    auto config = LoadSweepConfig(o.sweep_file);
    if (!config.ok()) {
      PrintError("hpo report", config.status());
      return kExitUsage;
    }
    journal = config->journal;
  }
  if (journal.empty()) {
    PrintError("hpo report",
               absl::InvalidArgumentError("name a journal: --journal PATH or a sweep file"));
    return kExitUsage;
  }
  if (output.empty()) output = ReportPathFor(journal);
  int64_t trials = 0;
  if (absl::Status written = WriteHtmlReport(journal, output, &trials); !written.ok()) {
    PrintError("hpo report", written);
    return absl::IsNotFound(written) || absl::IsPermissionDenied(written) ||
                   absl::IsInvalidArgument(written) || absl::IsFailedPrecondition(written)
               ? kExitUsage
               : kExitFailure;
  }
  std::cout << "report: " << output << " (" << trials << " trials)\n";
  return kExitOk;
}

int ReportCommand(const std::vector<std::string>& args) {
  ReportOptions options;
  if (int rc = ReportOptions::FromFlags(args, &options); rc >= 0) return rc;
  return RunReport(options);
}

}  // namespace hpo
}  // namespace tunefleet
