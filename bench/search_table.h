// A full-grid sweep's journal as a table of learning curves, and the "table trainer" that
// answers any point of the search space from it, so that a whole sweep replays in
// milliseconds (bench/sweep_replay.h).
//
// The journal: a sweep with `search.method: grid` and `early_terminate: {type: none}`; its
// COMPLETE trials are the table's points (failed attempts are skipped, a PRUNED trial is an
// error). Each point's curve is its intermediate values keyed by samples seen across the ranks,
// the final evaluation included, as hpo journals them (study user attr resource: "samples").
// Journals of the previous version were keyed by optimizer steps: their keys are converted,
// samples = step * batch_size * ranks * grad_accum (capped at the epoch's samples), and the
// final value is added at one epoch (TableOptions::epoch_samples), so a trial that reported no
// intermediate value has only that point.
//
// Answering a point: batch_size is the nearest table batch (log scale; ties: the smaller),
// every other parameter but lr the nearest table value; among the points with those values, the
// curve is interpolated linearly in log lr between the two table lrs around the point's lr
// (the end point's curve beyond them), and each curve linearly in samples between its keys
// (before its first key: its first value; after its last: its last).
//
// Thread-safety: immutable after Load; Answer may be called from several threads.
#ifndef TUNEFLEET_BENCH_SEARCH_TABLE_H_
#define TUNEFLEET_BENCH_SEARCH_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace bench {

using Params = std::map<std::string, double>;

struct TableOptions {
  // Only for journals keyed by steps: the samples of one epoch (required there), and the ranks
  // and gradient accumulation the table's trials ran with.
  int64_t epoch_samples = 0;
  int64_t ranks = 1;
  int64_t grad_accum = 1;
};

class SearchTable {
 public:
  struct Point {
    Params params;
    std::vector<int64_t> keys;   // samples, ascending; the last is the trial's total
    std::vector<double> values;  // the metric at each key; the last is the final value
  };

  static absl::StatusOr<SearchTable> Load(const std::string& journal, const TableOptions& options);

  const std::string& study_name() const { return study_name_; }
  bool maximize() const { return maximize_; }
  bool keyed_by_steps() const { return keyed_by_steps_; }
  const std::vector<Point>& points() const { return points_; }
  // The best final value of the grid, and the grid's compute: the samples its points trained.
  double best() const { return best_; }
  int64_t compute() const { return compute_; }
  // The samples of one epoch: the total of a point, over the epochs its trials trained (the
  // largest total, for a grid over epochs).
  int64_t max_total() const { return max_total_; }
  // The values of the table's parameters (each name's distinct values, ascending).
  const std::map<std::string, std::vector<double>>& axes() const { return axes_; }

  // The learning curve a trial with `params` trains along, at `keys` (samples).
  std::vector<double> Answer(const Params& params, const std::vector<int64_t>& keys) const;
  // The total samples of the point nearest `params` (its curve's last key).
  int64_t Total(const Params& params) const;

 private:
  // The table points around `params`: the nearest in every parameter but lr, then the two lrs
  // bracketing it, with the weight of the upper one.
  struct Bracket {
    const Point* low = nullptr;
    const Point* high = nullptr;
    double weight = 0;  // of `high`
  };
  Bracket Around(const Params& params) const;

  std::string study_name_;
  bool maximize_ = true;
  bool keyed_by_steps_ = false;
  std::vector<Point> points_;
  double best_ = 0;
  int64_t compute_ = 0;
  int64_t max_total_ = 0;
  std::map<std::string, std::vector<double>> axes_;
};

// The value of `curve` at `samples`: linear between its keys, flat beyond them.
double CurveAt(const SearchTable::Point& curve, int64_t samples);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_SEARCH_TABLE_H_
