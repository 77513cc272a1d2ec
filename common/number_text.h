// Doubles as the shortest text that reads back as the same double ("1e-05", "0.001", "3"), the
// way a value is handed on as a command-line override or compared as text; PythonRepr is
// Python's repr of a float ("3.0", "10.0", "1e-05", "1e+16", "nan"), as Optuna's JSON holds them.
// Thread-safety: pure functions.
#ifndef TUNEFLEET_COMMON_NUMBER_TEXT_H_
#define TUNEFLEET_COMMON_NUMBER_TEXT_H_

#include <string>

namespace tunefleet {

std::string ShortestText(double value);
std::string PythonRepr(double value);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_NUMBER_TEXT_H_
