// Correlation coefficients as scipy.stats computes them: Pearson's r, and Spearman's rho as
// Pearson's r of the ranks, tied values sharing their average rank. NaN when a series is
// constant or the lengths differ or are below 2. Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_TASKS_CORRELATION_H_
#define TUNEFLEET_TRAINER_TASKS_CORRELATION_H_

#include <vector>

namespace tunefleet {
namespace trainer {

double Pearson(const std::vector<double>& x, const std::vector<double>& y);
double Spearman(const std::vector<double>& x, const std::vector<double>& y);
// 1-based ranks, ties averaged (scipy.stats.rankdata, method "average").
std::vector<double> AverageRanks(const std::vector<double>& x);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_CORRELATION_H_
