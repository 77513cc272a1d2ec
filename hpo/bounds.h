// Whether a sweep's best point lies on a bound of its search space, which says that the range
// was too narrow and the optimum may lie outside it. A parameter's value is on a bound when it
// lies within kBoundShare of the range's width (on the log scale for log_uniform) of its min or
// max; for int, when it is min or max of a range of at least three integers; for a list of
// numbers (batch_size included), when it is the smallest or largest of at least three values.
// Lists of strings have no order and no bounds. Each hit comes with one line for the user:
//   best lr at the upper bound 0.001: widen parameters.lr.max
//   best batch_size at the smallest value 16: add smaller values to parameters.batch_size.values
//
// Thread-safety: pure functions.
#ifndef TUNEFLEET_HPO_BOUNDS_H_
#define TUNEFLEET_HPO_BOUNDS_H_

#include <map>
#include <string>
#include <vector>

#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {

inline constexpr double kBoundShare = 0.05;

struct BoundHit {
  std::string param;
  bool upper = false;
  std::string message;
};

// The parameters of `best` (a point of `space`) that lie on a bound, in parameter-name order.
std::vector<BoundHit> BestAtBounds(const SearchSpace& space,
                                   const std::map<std::string, double>& best);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_BOUNDS_H_
