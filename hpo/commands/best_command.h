// `hpo best`: the best completed trial of the sweep in a journal, how to re-run it alone, and
// the parameters it found at a bound of their range. Exit 0; 1 when no trial completed (or all
// with NaN); 2 for a bad flag or journal.
//
// Thread-safety: runs on the main thread.
#ifndef TUNEFLEET_HPO_COMMANDS_BEST_COMMAND_H_
#define TUNEFLEET_HPO_COMMANDS_BEST_COMMAND_H_

#include <string>
#include <vector>

#include "hpo/commands/journal_options.h"

namespace tunefleet {
namespace hpo {

int RunBest(const BestOptions& options);
// BestOptions::FromFlags, then RunBest.
int BestCommand(const std::vector<std::string>& args);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_COMMANDS_BEST_COMMAND_H_
