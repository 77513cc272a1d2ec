// The trial user attrs that hpo keeps in Trial, in one table: each row is the attr's name in the
// journal, the Trial member it fills (whose type is the attr's: a float, an integer, a string, a
// flag or an optional float) and when hpo writes it. From this table alone
//   - the journal writer writes them (hpo/journal/journal_writer.h: CreateTrial the kAtCreation
//     rows, Finish of a FAIL the kAtFailure rows, SetUserAttr(trial, member) the others, which
//     SweepEngine records as they happen),
//   - the replay reads them back into Trial, checking their types (hpo/journal/journal_decode.h
//     ApplyUserAttr, CheckUserAttr),
//   - the study's JSON view emits them (hpo/journal/study_json.h), in the table's order.
// Adding a user attr is a Trial member, one row here, and its use. The journal's bytes are
// Optuna's JournalStorage (numbers as Python's repr, strings as json.dumps): UserAttrValue.
//
// Thread-safety: a constant table and pure functions.
#ifndef TUNEFLEET_HPO_JOURNAL_TRIAL_USER_ATTRS_H_
#define TUNEFLEET_HPO_JOURNAL_TRIAL_USER_ATTRS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "common/py_json.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// The Trial member a user attr fills; its type is the attr's.
using UserAttrMember = std::variant<double Trial::*, int64_t Trial::*, std::string Trial::*,
                                    bool Trial::*, std::optional<double> Trial::*>;

enum class UserAttrWritten {
  kAtCreation,   // by CreateTrial, always (and always in the study's JSON)
  kAtFailure,    // by Finish of a FAIL, when set
  kWhileRunning  // by SetUserAttr(trial, member) as it happens, when set
};

struct TrialUserAttr {
  const char* name;
  UserAttrMember member;
  UserAttrWritten written;
};

// Every row, in the order the study's JSON lists them.
const std::vector<TrialUserAttr>& TrialUserAttrs();
// The row of `name`; null for an attr Trial has no place for (the replay drops those).
const TrialUserAttr* FindTrialUserAttr(std::string_view name);
// The row of `member`; CHECK-fails for a member that is no user attr.
const TrialUserAttr& UserAttrOf(UserAttrMember member);

// Whether `t` holds the attr: always for kAtCreation rows, else a non-empty string, a true flag,
// a float that has a value.
bool HasUserAttr(const TrialUserAttr& attr, const Trial& t);
// `t`'s value of the attr as the journal writes it: JsonFloat, a decimal integer, JsonString,
// true / false; "null" for an optional float without a value.
std::string UserAttrValue(const TrialUserAttr& attr, const Trial& t);
// Sets the attr's member of *t from `value` (a journal's JSON); InvalidArgument naming the attr
// and the type it expected when `value` has another ('user attr "point": expected an integer,
// got "3"').
absl::Status ReadUserAttr(const TrialUserAttr& attr, const PyJson& value, Trial* t);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_JOURNAL_TRIAL_USER_ATTRS_H_
