// SuccessiveHalvingPruner: Optuna 3.1's SuccessiveHalvingPruner (asynchronous successive
// halving), decision for decision. Rung r ends at step
//   min_resource * reduction_factor^(min_early_stopping_rate + r).
// When the RUNNING trial's last (largest) step reaches the end of its current rung (the first r
// without a "completed_rung_r" system attr), Prune records its value at that step as
// "completed_rung_r" on the trial (in study->trials[index].system_attrs) and ranks it against
// every trial's "completed_rung_r" (any state). The trial goes on to rung r + 1 (and is checked
// there at once) when it is in the top 1/reduction_factor of those values (for the first
// reduction_factor - 1 entrants of a rung: when it is the best so far); otherwise, or while no
// more than bootstrap_count trials have completed the rung, it is pruned. A NaN value at a
// rung's end is pruned without being recorded.
//
// min_resource 0 is Optuna's "auto": estimated once, at the first Prune call that finds a
// COMPLETE trial with reports, as max(1, largest such last step / 100), and kept for the life
// of this object; until then Prune returns false. (Optuna rejects "auto" with
// bootstrap_count > 0; this class accepts it and applies both.)
//
// PruneAmong runs the same algorithm over a subset of the study's trials, as a bracket of
// HyperbandPruner does: only the members' "completed_rung_r" attrs compete and only members
// count for the "auto" estimate.
//
// SuccessiveHalvingPrunerKind is its registry entry (hpo/pruners/pruner_kind.h):
// `early_terminate: {type: successive_halving}` with the optional min_resource (auto or >= 1
// samples), reduction_factor (default 4, >= 2), min_early_stopping_rate (0, >= 0) and
// bootstrap_count (0, >= 0; > 0 needs an explicit min_resource, as Optuna requires).
//
// Thread-safety: a pruner is used from the sweep driver's thread only; the kind is immutable.
#ifndef TUNEFLEET_HPO_PRUNERS_SUCCESSIVE_HALVING_PRUNER_H_
#define TUNEFLEET_HPO_PRUNERS_SUCCESSIVE_HALVING_PRUNER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "hpo/pruners/pruner.h"
#include "hpo/pruners/pruner_kind.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// Optuna SuccessiveHalvingPruner(min_resource, reduction_factor, min_early_stopping_rate,
// bootstrap_count); min_resource 0 means "auto".
struct SuccessiveHalvingSpec {
  int64_t min_resource = 0;
  int64_t reduction_factor = 4;
  int64_t min_early_stopping_rate = 0;
  int64_t bootstrap_count = 0;
};

class SuccessiveHalvingPruner : public Pruner {
 public:
  // `spec` as its kind validates it: min_resource >= 1 or 0 (auto),
  // reduction_factor >= 2, min_early_stopping_rate >= 0, bootstrap_count >= 0.
  explicit SuccessiveHalvingPruner(const SuccessiveHalvingSpec& spec);

  bool Prune(Study* study, size_t index) override;

  // Prune as if the study held only the trials for which `member` is true, in the same order
  // (Optuna's HyperbandPruner hands each bracket such a filtered view of the study). `member`
  // must hold for study->trials[index] and give the same answer for a trial every time it is
  // asked (it is asked once per trial and rung judged).
  bool PruneAmong(Study* study, size_t index, absl::FunctionRef<bool(const Trial&)> member);

 private:
  std::optional<int64_t> min_resource_;  // unset: auto, not estimated yet
  int64_t reduction_factor_;
  int64_t min_early_stopping_rate_;
  int64_t bootstrap_count_;
};

// "completed_rung_<rung>", the system attr a trial gets when it completes a rung.
std::string CompletedRungKey(int64_t rung);

// The largest last step of the COMPLETE trials for which `member` is true; unset while none has
// reported. Both of Optuna's "auto" resources start from it (min_resource here, HyperbandPruner's
// max_resource).
std::optional<int64_t> LargestCompleteStep(const Study& study,
                                           absl::FunctionRef<bool(const Trial&)> member);

const PrunerKind& SuccessiveHalvingPrunerKind();

// A resource for the dry run: `auto_text` for 0 (the pruner's "auto"), else the samples.
std::string ResourceText(int64_t samples, const char* auto_text = "auto");

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_SUCCESSIVE_HALVING_PRUNER_H_
