// Decoding one journal operation's fields as Optuna 3.1's replay reads them (hpo/
// journal_format.h): typed fields, distributions (json_to_distribution), external param values
// (to_external_repr), and the user / system attrs that Trial holds.
//
// Internal to the journal: the replay (hpo/journal/journal_replay.cc) decodes a line's operation
// with these and turns a JournalOpError into a status naming the file and line, so the functions in
// journal_internal throw JournalOpError on a malformed field. Outside the journal use
// CheckUserAttr, which returns a status.
// Thread-safety: pure functions.
#ifndef TUNEFLEET_HPO_JOURNAL_JOURNAL_DECODE_H_
#define TUNEFLEET_HPO_JOURNAL_JOURNAL_DECODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "common/py_json.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// InvalidArgument when `value` does not have the type Trial holds for the user attr `key`
// (hpo/journal/trial_user_attrs.h), so that a journal holding it would not read back. Other
// keys are fine.
absl::Status CheckUserAttr(const std::string& key, const PyJson& value);

namespace journal_internal {

// A malformed operation: what is wrong with which field.
struct JournalOpError {
  std::string message;
};

[[noreturn]] void Fail(std::string message);

// The field `key` of an operation (missing: an error).
const PyJson& Field(const PyJson& log, const char* key);
// `v` as a type; `what` names it in the error.
int64_t AsInt(const PyJson& v, const std::string& what);
double AsNumber(const PyJson& v, const std::string& what);
const std::string& AsString(const PyJson& v, const std::string& what);
TrialState AsState(const PyJson& v);
// A one-entry {"key": value} (Optuna asserts len == 1).
std::pair<std::string, const PyJson*> SingleAttr(const PyJson& log, const char* field);
// "values": null or a one-element list (single-objective).
std::optional<double> SingleValue(const PyJson& values);
// A datetime field that may be null (empty then).
std::string DatetimeField(const PyJson& v, const char* what);

// A distribution as json_to_distribution reads it; `name` is the Python class (compatibility
// checks compare classes).
struct ParsedDistribution {
  std::string name;
  Distribution dist;
};
// `text_json`: the distribution's JSON text (a JSON string).
ParsedDistribution ParseDistribution(const PyJson& text_json);
// check_distribution_compatibility.
bool Compatible(const ParsedDistribution& old_d, const ParsedDistribution& new_d);
// to_external_repr: the choice for a categorical's index, else the value itself.
double ToExternal(const ParsedDistribution& d, const PyJson& internal_json);

// Sets the user / system attr `key` on `t` where Trial has a place for it (a user attr of
// hpo/journal/trial_user_attrs.h; other user attrs are dropped; non-numeric system attrs other than
// failed_trial / retry_history are removed).
void ApplyUserAttr(const std::string& key, const PyJson& v, Trial* t);
void ApplySystemAttr(const std::string& key, const PyJson& v, Trial* t);

}  // namespace journal_internal
}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_JOURNAL_JOURNAL_DECODE_H_
