#!/usr/bin/env bash
# sweep_load_bench (issue 32): hpo with thousands of trials. Runs `hpo sweep` in single-node dev
# mode (a real head and agent, a trainer process per trial) on a synthetic sweep of TRIALS
# zero-step trials, CONCURRENCY at a time on as many slots, and prints:
#   - bench/sweep_load_check.py's line: every trial COMPLETE once, no point repeated, the
#     trials/s overall and over the first and the last 1,000 (WINDOW) trials;
#   - hpo's resident memory (VmRSS) as the trials ended, sampled every second;
#   - whether the HTML report exists at the end.
# Usage: sweep_load_bench [TRIALS=10000] [CONCURRENCY=64] [WINDOW=1000]
set -uo pipefail
TRIALS=${1:-10000}
CONCURRENCY=${2:-64}
WINDOW=${3:-1000}
HERE=$(dirname "$(readlink -f "$0")")
# hpo, with the head, agent and trainer beside it: in the runfiles under `bazel run`, beside
# this script in a CMake build (build/bin/), or named by $HPO.
HPO=${HPO:-${RUNFILES_DIR:-$0.runfiles}/tunefleet/hpo/hpo}
[ -x "$HPO" ] || HPO=$(dirname "$0")/hpo
CHECK=${CHECK:-$HERE/sweep_load_check.py}
[ -f "$CHECK" ] || CHECK=${RUNFILES_DIR:-$0.runfiles}/tunefleet/bench/sweep_load_check.py
work=$(mktemp -d /tmp/tf-load-XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/sweep.yaml" <<YAML
name: load-bench
metric: {name: eval/spearman, goal: maximize}
trainer: {synthetic: {steps: 0, seconds_per_step: 0.0, noise: 0.0, seed: 0}}
resources: {gpus_per_trial: 1}
parameters:
  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}
  batch_size: {values: [16, 32, 64, 128]}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: random, random: {trials: $TRIALS, seed: 0}}
early_terminate: {type: none}
max_concurrent_trials: $CONCURRENCY
max_failures_per_trial: 0
journal: $work/run/journal.log
YAML
start=$(date +%s.%N)
"$HPO" sweep "$work/sweep.yaml" --slots "$CONCURRENCY" > "$work/out.txt" 2> "$work/err.txt" &
pid=$!
: > "$work/rss.txt"
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  ended=$(grep -c '"op_code": 6' "$work/run/journal.log" 2>/dev/null)
  [ -n "$rss" ] && echo "${ended:-0} $rss" >> "$work/rss.txt"
  sleep 1
done
wait "$pid"; rc=$?
wall=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
echo "hpo sweep: exit $rc, wall $wall s, $TRIALS trials, $CONCURRENCY at a time"
[ "$rc" -eq 0 ] || tail -5 "$work/err.txt"
python3 "$CHECK" "$work/run/journal.log" "$TRIALS" "$WINDOW" 0.8
python3 - "$work/rss.txt" <<'PY'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
if rows:
    last = rows[-1][0] or 1
    marks = []
    for q in (0.1, 0.25, 0.5, 0.75, 1.0):
        r = min(rows, key=lambda r: abs(r[0] - q * last))
        marks.append(f"{r[0]} trials: {r[1] / 1024:.1f} MiB")
    print("hpo resident memory: " + ", ".join(marks))
PY
[ -s "$work/run/journal.html" ] && echo "report: $(du -h "$work/run/journal.html" | cut -f1)" ||
  echo "report: missing"
exit "$rc"
