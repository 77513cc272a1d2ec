// hpo's own view of a study as JSON: `hpo status --format json`, `hpo sweep --report_json`, and
// what the tests compare with Optuna's reading of the journal (tests/hpo/journal_optuna_check.py):
//   {"study_name", "direction": "MAXIMIZE" | "MINIMIZE", "user_attrs": {...},
//    "trials": [{"number", "state", "params", "distributions": {name: Optuna distribution JSON
//    (a string)}, "value", "intermediate_values": {"step": v}, "user_attrs", "system_attrs",
//    "datetime_start", "datetime_complete"}]}
// Floats are written as Python's json.dumps writes them (NaN, Infinity, -Infinity as bare
// tokens), so json.load reads the same values Optuna holds.
#ifndef TUNEFLEET_HPO_JOURNAL_STUDY_JSON_H_
#define TUNEFLEET_HPO_JOURNAL_STUDY_JSON_H_

#include <map>
#include <string>

#include "hpo/journal/journal_replay.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// Every trial's params distributed as `space`; study user attrs as raw JSON values.
std::string StudyToJson(const Study& study, const SearchSpace& space,
                        const std::map<std::string, std::string>& study_user_attrs);

// A journal as ReadJournal read it, with each trial's own distributions.
std::string JournalToJson(const JournalContents& contents);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_JOURNAL_STUDY_JSON_H_
