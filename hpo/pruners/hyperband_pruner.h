// HyperbandPruner: Optuna 3.1's HyperbandPruner, decision for decision. It runs n_brackets
// asynchronous successive halvings side by side ("brackets"): bracket b is
// SuccessiveHalvingPruner(min_resource, reduction_factor, min_early_stopping_rate = b,
// bootstrap_count), so its rung r ends at step min_resource * reduction_factor^(b + r), and it
// sees only the trials of its own bracket (any state, the judged trial included): only their
// "completed_rung_r" system attrs compete, and the judged trial records its own there as
// successive halving does. Trials of different brackets write the same keys; which bracket an
// attr belongs to follows from the study name and the trial number alone.
//
// The brackets are made by the first Prune call (for whichever trial, reports or not) that
// knows max_resource: the first call of all for a fixed max_resource; for max_resource 0
// (Optuna's "auto"), the first call that finds a COMPLETE trial with reports, which sets
// max_resource = (largest last step of the COMPLETE trials) + 1 for the life of this object.
// Until then Prune returns false and records nothing. Then
//   n_brackets = floor(log(max_resource / min_resource) / log(reduction_factor)) + 1
// in doubles, as Python's math.log(x, base) computes it: 1000 / 1 with factor 10 gives 3
// brackets, not 4 (the log is 2.9999999999999996), and 243 / 1 with factor 3 gives 5, as 81
// does. When n_brackets <= 0 (max_resource < min_resource) no bracket is ever made and Prune
// returns false for ever.
//
// Trial number n of the study named N (Study::name) is in bracket HyperbandBracket(N, n,
// budgets): the CRC-32 of the UTF-8 string "N_n" modulo the sum of the per-bracket budgets
//   budget[b] = ceil(n_brackets * reduction_factor^s / (s + 1)),  s = n_brackets - 1 - b,
// walked from bracket 0 (which has the largest budget, reduction_factor^(n_brackets - 1)). The
// same trials under another study name fall into other brackets.
//
// HyperbandPrunerKind is its registry entry (hpo/pruners/pruner_kind.h): `early_terminate:
// {type: hyperband}` with the optional min_resource (auto: one evaluation interval, resolved
// against the sweep's resource axis; or >= 1 samples), max_resource (auto: Optuna's; or >= 1),
// reduction_factor (default 3, >= 2), bootstrap_count (0, >= 0; > 0 needs an explicit
// max_resource), and W&B's spellings min_iter, max_iter (in evaluation intervals), eta (for
// reduction_factor) and s (min_iter = floor(max_iter / eta^s)); `strict` is refused.
//
// Thread-safety: a pruner is used from the sweep driver's thread only; the kind is immutable.
#ifndef TUNEFLEET_HPO_PRUNERS_HYPERBAND_PRUNER_H_
#define TUNEFLEET_HPO_PRUNERS_HYPERBAND_PRUNER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "hpo/pruners/pruner.h"
#include "hpo/pruners/pruner_kind.h"
#include "hpo/pruners/successive_halving_pruner.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// Optuna HyperbandPruner(min_resource, max_resource, reduction_factor, bootstrap_count), on the
// samples axis. min_resource 0 in the YAML is "auto" (one evaluation interval), which the
// settings' Resolve sets to a number of samples before any pruner is made; max_resource 0 is
// Optuna's "auto" (the largest last step of the COMPLETE trials, plus one).
struct HyperbandSpec {
  int64_t min_resource = 0;
  int64_t max_resource = 0;
  int64_t reduction_factor = 3;
  int64_t bootstrap_count = 0;
  // W&B's min_iter and max_iter (0: not given), in evaluation intervals; Resolve sets
  // min_resource and max_resource from them.
  int64_t min_iter = 0;
  int64_t max_iter = 0;
};

class HyperbandPruner : public Pruner {
 public:
  // `spec` with min_resource >= 1 (resolved by its settings' Resolve), max_resource >= 1 or
  // 0 (auto),
  // reduction_factor >= 2, bootstrap_count >= 0. (Optuna rejects "auto" with
  // bootstrap_count > 0; this class accepts it and applies both.) Resources up to 2^53 give
  // exactly Optuna's n_brackets (Python divides its unbounded ints exactly).
  explicit HyperbandPruner(const HyperbandSpec& spec);

  bool Prune(Study* study, size_t index) override;

  // The number of brackets (<= 0: none) once max_resource is known; unset before.
  std::optional<int64_t> n_brackets() const { return n_brackets_; }

 private:
  // Optuna's _try_initialization: learns max_resource if it can, then makes the brackets.
  void TryInitialize(const Study& study);

  HyperbandSpec spec_;
  std::optional<int64_t> max_resource_;  // unset: auto, not estimated yet
  std::optional<int64_t> n_brackets_;    // set with max_resource_
  std::vector<int64_t> budgets_;         // HyperbandBudgets(n_brackets_)
  std::vector<SuccessiveHalvingPruner> brackets_;
};

// zlib's CRC-32 (reflected polynomial 0xEDB88320), as Python's binascii.crc32.
uint32_t Crc32(std::string_view data);

// floor(math.log(max_resource / min_resource, reduction_factor)) + 1, bit for bit: may be <= 0.
// min_resource, max_resource >= 1; reduction_factor >= 2.
int64_t HyperbandBracketCount(int64_t min_resource, int64_t max_resource, int64_t reduction_factor);

// The trial allocation budget of each bracket 0 .. n_brackets - 1 (n_brackets from
// HyperbandBracketCount; empty when <= 0), ceil(n_brackets * reduction_factor^s / (s + 1)) as
// Python computes it, except that a budget of 2^32 or more is given as 2^32: every CRC-32 is
// below it, so such a budget (always bracket 0's) puts every trial in bracket 0, as Optuna's
// exact one does.
std::vector<int64_t> HyperbandBudgets(int64_t n_brackets, int64_t reduction_factor);

// Optuna's _get_bracket_id: the bracket of trial `trial_number` of the study `study_name`.
// `budgets` from HyperbandBudgets, not empty.
int64_t HyperbandBracket(std::string_view study_name, int64_t trial_number,
                         const std::vector<int64_t>& budgets);

const PrunerKind& HyperbandPrunerKind();

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_HYPERBAND_PRUNER_H_
