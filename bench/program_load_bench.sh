#!/usr/bin/env bash
# program_load_bench (issue 48): what a trial of a program of your own costs the machinery. Two
# dev-mode sweeps of TRIALS trials, CONCURRENCY at a time on as many CPU slots, no pruning:
#   synthetic  tunefleet's synthetic trainer, one step (one report), a trainer process a trial;
#   program    `python3 -c` importing python/tunefleet, one tunefleet.report() (its value the
#              wall clock at the report), then exit.
# Prints per sweep: exit, wall time, trials/s (bench/sweep_load_check.py: every trial COMPLETE
# once, no point twice), and from the journal the median and p90 of each trial's submit
# (datetime_start) to its end (datetime_complete); for the program also submit to the moment its
# report was written (the reported wall clock). Usage:
#   bazel run -c opt //bench:program_load_bench -- [TRIALS=1000] [CONCURRENCY=16]
set -uo pipefail
TRIALS=${1:-1000}
CONCURRENCY=${2:-16}
HERE=$(dirname "$(readlink -f "$0")")
RUNFILES=${RUNFILES_DIR:-$0.runfiles}/tunefleet
HPO=${HPO:-$RUNFILES/hpo/hpo}
[ -x "$HPO" ] || HPO=$(dirname "$0")/hpo
CHECK=${CHECK:-$HERE/sweep_load_check.py}
[ -f "$CHECK" ] || CHECK=$RUNFILES/bench/sweep_load_check.py
HELPER=${HELPER:-$RUNFILES/python}
[ -d "$HELPER/tunefleet" ] || HELPER=$(cd "$HERE/.." && pwd)/python
PY=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d /tmp/tf-prog-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

sweep_yaml() {  # sweep_yaml NAME TRAINER_LINES METRIC
  cat > "$work/$1.yaml" <<YAML
name: $1
metric: {name: $3, goal: maximize}
trainer:
$2
resources: {gpus_per_trial: 1}
parameters:
  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}
  batch_size: {values: [16, 32, 64, 128]}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: random, random: {trials: $TRIALS, seed: 0}}
early_terminate: {type: none}
max_concurrent_trials: $CONCURRENCY
max_failures_per_trial: 0
journal: $work/$1/journal.log
YAML
}
sweep_yaml synthetic "  synthetic: {steps: 1, seconds_per_step: 0.0, noise: 0.0, seed: 0}" eval/spearman
sweep_yaml program "  program: [$PY, -c, 'import sys, time; sys.path.insert(0, \"$HELPER\"); import tunefleet; tunefleet.report(step=1, t=time.time())']" t

for name in synthetic program; do
  start=$(date +%s.%N)
  "$HPO" sweep "$work/$name.yaml" --slots "$CONCURRENCY" > "$work/$name.out" 2> "$work/$name.err"
  rc=$?
  echo "$name: hpo sweep exit $rc, wall $("$PY" -c "import time; print(f'{time.time() - $start:.1f}')") s, $TRIALS trials, $CONCURRENCY at a time"
  [ "$rc" -eq 0 ] || tail -5 "$work/$name.err"
  "$PY" "$CHECK" "$work/$name/journal.log" "$TRIALS" "$((TRIALS / 4))" 0.5
  "$PY" - "$work/$name/journal.log" "$name" <<'PY'
import datetime, json, sys
start, end, reported = {}, {}, {}
for line in open(sys.argv[1]):
    op = json.loads(line)
    code, tid = op.get("op_code"), op.get("trial_id")
    if code == 4:
        start[len(start)] = datetime.datetime.fromisoformat(op["datetime_start"]).timestamp()
    elif code == 6 and op.get("datetime_complete"):
        end[tid] = datetime.datetime.fromisoformat(op["datetime_complete"]).timestamp()
    elif code == 7 and tid not in reported:  # SET_TRIAL_INTERMEDIATE_VALUE: the first
        reported[tid] = op["intermediate_value"]
def quantiles(values):
    values = sorted(values)
    return "median %.0f ms, p90 %.0f ms" % (1000 * values[len(values) // 2], 1000 * values[int(len(values) * 0.9)])
print("%s: submit to end %s" % (sys.argv[2], quantiles([end[t] - start[t] for t in end])))
if sys.argv[2] == "program":
    print("program: submit to its report written %s" % quantiles([reported[t] - start[t] for t in reported]))
PY
done
