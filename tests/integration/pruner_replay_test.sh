#!/usr/bin/env bash
# Differential test against Optuna on the samples axis: sequential sweeps (one trial at a time)
# with the median, percentile, successive-halving and hyperband pruners; every continue/prune decision hpo
# took is replayed through Optuna 3.1's own pruner on the same intermediate values, keyed by
# samples (tests/integration/pruner_replay_check.py).  Args: hpo binary.
HPO=$1
source tests/integration/lib.sh

run() {  # run NAME OVERRIDES...; WANT_RC: hpo's exit code (3: every trial was pruned)
  local name=$1; shift
  local rc=0
  "$HPO" sweep configs/synthetic.yaml --journal "$WORK/$name/journal.log" name="$name" \
    max_concurrent_trials=1 search.method=random search.random.trials=24 \
    trainer.synthetic.seconds_per_step=0 trainer.synthetic.noise=0.05 trainer.synthetic.steps=16 \
    trainer.synthetic.samples_per_step=64 "$@" >"$WORK/$name.out" 2>&1 || rc=$?
  [ "$rc" -eq "${WANT_RC:-0}" ] || fail "$name sweep exited $rc: $(tail -3 "$WORK/$name.out")"
}
check() {  # check NAME KIND
  "$PY" tests/integration/pruner_replay_check.py "$WORK/$1/journal.log" "$2" ||
    fail "$1: decisions differ from Optuna's"
}
run median 'early_terminate={type: median, n_startup_trials: 3, n_warmup_steps: 128, interval_steps: 128, n_min_trials: 2}'
check median median
run percentile 'early_terminate={type: percentile, percentile: 30, n_startup_trials: 3, n_warmup_steps: 128, interval_steps: 128, n_min_trials: 2}'
check percentile percentile
run percentile_min 'early_terminate={type: percentile, percentile: 70, n_startup_trials: 2}' metric.goal=minimize
check percentile_min percentile
# bootstrap_count 1 prunes every trial at its first rung: no trial completes, hpo exits 3.
WANT_RC=3 run sha 'early_terminate={type: successive_halving, min_resource: 64, reduction_factor: 2, min_early_stopping_rate: 0, bootstrap_count: 1}'
check sha successive_halving
run sha_auto 'early_terminate={type: successive_halving, reduction_factor: 3}'
check sha_auto successive_halving
run hyperband 'early_terminate={type: hyperband, min_resource: 64, reduction_factor: 2}'
check hyperband hyperband
run hyperband_auto 'early_terminate={type: hyperband, reduction_factor: 3}'
check hyperband_auto hyperband
finish
