// `hpo status`: the trials of a sweep from its journal (--journal, or the sweep file's
// `journal`), as a table or as hpo's JSON view (hpo/journal/study_json.h). Exit 0, or 2 for a
// bad flag, sweep file or journal.
//
// Thread-safety: runs on the main thread.
#ifndef TUNEFLEET_HPO_COMMANDS_STATUS_COMMAND_H_
#define TUNEFLEET_HPO_COMMANDS_STATUS_COMMAND_H_

#include <string>
#include <vector>

#include "hpo/commands/journal_options.h"

namespace tunefleet {
namespace hpo {

int RunStatus(const StatusOptions& options);
// StatusOptions::FromFlags, then RunStatus.
int StatusCommand(const std::vector<std::string>& args);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_COMMANDS_STATUS_COMMAND_H_
