#!/usr/bin/env bash
# A sweep of many trials (issue 32): 2,000 zero-step synthetic trials, 16 at a time on 16 slots,
# in single-node dev mode (a real head, agent and trainer process per trial). It must complete,
# every trial COMPLETE once, no point run twice (bench/sweep_load_check.py reads the journal),
# and hpo's cost per trial must not grow with the sweep: the last 500 trials end at least 60% as
# fast as the first 500 (hpo once re-read the whole journal and redrew the report after every
# trial: the last 500 then ran at a third of the first's rate, and a sweep of 2,000 died). The
# report is written at the end, and during the sweep no more often than every few seconds.
# Args: hpo binary, sweep_load_check.py.
HPO=$1
CHECK=$2
source tests/integration/lib.sh
cat > "$WORK/sweep.yaml" <<YAML
name: load
metric: {name: eval/spearman, goal: maximize}
trainer: {synthetic: {steps: 0, seconds_per_step: 0.0, noise: 0.0, seed: 0}}
resources: {gpus_per_trial: 1}
parameters:
  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}
  batch_size: {values: [16, 32, 64, 128]}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: random, random: {trials: 2000, seed: 0}}
early_terminate: {type: none}
max_concurrent_trials: 16
max_failures_per_trial: 0
journal: $WORK/run/journal.log
YAML
start=$(date +%s)
"$HPO" sweep "$WORK/sweep.yaml" --slots 16 > "$WORK/out.txt" 2> "$WORK/err.txt"; rc=$?
echo "hpo sweep: exit $rc in $(( $(date +%s) - start )) s"
[ "$rc" -eq 0 ] || fail "hpo sweep exited $rc: $(tail -3 "$WORK/err.txt")"
line=$("$PY" "$CHECK" "$WORK/run/journal.log" 2000 500 0.6); ok=$?
echo "$line"
[ "$ok" -eq 0 ] || fail "the journal's check: $line"
[ -s "$WORK/run/journal.html" ] || fail "no report at the end"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
