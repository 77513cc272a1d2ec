#!/usr/bin/env bash
# Differential test against Optuna: sequential sweeps (one trial at a time) with the median and
# the successive-halving pruner; every continue/prune decision hpo took is replayed through
# Optuna 3.1's own pruner on the same intermediate values.  Args: hpo binary.
HPO=$1
source tests/integration/lib.sh

run() {  # run NAME OVERRIDES...
  local name=$1; shift
  "$HPO" sweep configs/synthetic.yaml --journal "$WORK/$name/journal.log" name="$name" \
    max_concurrent_trials=1 search.method=random search.random.trials=24 \
    trainer.synthetic.seconds_per_step=0 trainer.synthetic.noise=0.05 trainer.synthetic.steps=16 \
    "$@" >"$WORK/$name.out" 2>&1 || fail "$name sweep failed: $(tail -3 "$WORK/$name.out")"
}
run median 'early_terminate={type: median, n_startup_trials: 3, n_warmup_steps: 2, interval_steps: 2, n_min_trials: 2}'
"$PY" tests/integration/pruner_replay_check.py "$WORK/median/journal.log" median 3 2 2 2 ||
  fail "median decisions differ from Optuna's"
run sha 'early_terminate={type: successive_halving, min_resource: 1, reduction_factor: 2, min_early_stopping_rate: 0, bootstrap_count: 1}'
"$PY" tests/integration/pruner_replay_check.py "$WORK/sha/journal.log" successive_halving 1 2 0 1 ||
  fail "successive-halving decisions differ from Optuna's"
run sha_auto 'early_terminate={type: successive_halving, reduction_factor: 3}'
"$PY" tests/integration/pruner_replay_check.py "$WORK/sha_auto/journal.log" successive_halving auto 3 0 0 ||
  fail "successive-halving (auto min_resource) decisions differ from Optuna's"
finish
