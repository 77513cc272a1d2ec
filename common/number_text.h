// Doubles as the shortest text that reads back as the same double ("1e-05", "0.001", "3"), the
// way a value is handed on as a command-line override or compared as text; PythonRepr adds the
// ".0" Python's repr gives whole floats ("3.0"), as Optuna's JSON holds them.
// Thread-safety: pure functions.
#ifndef TUNEFLEET_COMMON_NUMBER_TEXT_H_
#define TUNEFLEET_COMMON_NUMBER_TEXT_H_

#include <string>

namespace tunefleet {

std::string ShortestText(double value);
std::string PythonRepr(double value);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_NUMBER_TEXT_H_
