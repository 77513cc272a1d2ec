// `hpo report`: writes the self-contained HTML page of a sweep from its journal (--journal, or
// the sweep file's `journal`; hpo/report/report.h). Exit 0; 2 for a bad flag, sweep file or
// journal, or an output it may not write; 1 for another failure.
//
// Thread-safety: runs on the main thread.
#ifndef TUNEFLEET_HPO_COMMANDS_REPORT_COMMAND_H_
#define TUNEFLEET_HPO_COMMANDS_REPORT_COMMAND_H_

#include <string>
#include <vector>

#include "hpo/commands/journal_options.h"

namespace tunefleet {
namespace hpo {

int RunReport(const ReportOptions& options);
// ReportOptions::FromFlags, then RunReport.
int ReportCommand(const std::vector<std::string>& args);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_COMMANDS_REPORT_COMMAND_H_
