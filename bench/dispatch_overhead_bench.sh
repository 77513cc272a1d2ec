#!/usr/bin/env bash
# dispatch_overhead_bench: the per-trial cost of the whole machinery, hpo -> head -> agent ->
# trainer process -> report -> exit, with trials that do no work at all.
#
# Runs `hpo sweep` in single-node dev mode (a real head and agent over ZeroMQ, a real trainer
# process per trial) on a synthetic sweep of N zero-step trials (the trainer reports its final
# value at once and exits), S trials at a time, and prints:
#   - wall time and wall time per trial (= dispatch overhead per trial: trials do nothing), and
#   - per-trial latency from the journal (datetime_start -> datetime_complete): median and p99.
# Usage: dispatch_overhead_bench [TRIALS=500] [SLOTS=8]
set -euo pipefail
TRIALS=${1:-500}
SLOTS=${2:-8}
# hpo, with the head, agent and trainer beside it: in the runfiles under `bazel run`, beside
# this script in a CMake build (build/bin/), or named by $HPO.
HPO=${HPO:-${RUNFILES_DIR:-$0.runfiles}/tunefleet/hpo/hpo}
[ -x "$HPO" ] || HPO=$(dirname "$0")/hpo
work=$(mktemp -d /tmp/tf-dispatch-XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/sweep.yaml" <<YAML
name: dispatch-bench
metric: {name: eval/spearman, goal: maximize}
trainer: {synthetic: {steps: 0, seconds_per_step: 0.0, noise: 0.0, seed: 0}}
resources: {gpus_per_trial: 1}
parameters:
  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}
  batch_size: {values: [16, 32, 64, 128]}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: random, random: {trials: $TRIALS, seed: 0}}
early_terminate: {type: none}
max_concurrent_trials: $SLOTS
max_failures_per_trial: 0
journal: $work/journal.log
YAML
start=$(date +%s.%N)
"$HPO" sweep "$work/sweep.yaml" --slots "$SLOTS" > "$work/out.txt" 2>&1 || {
  tail -20 "$work/out.txt"; echo "dispatch_overhead_bench: hpo sweep failed" >&2; exit 1; }
end=$(date +%s.%N)
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
"$PY" - "$work/journal.log" "$start" "$end" "$TRIALS" "$SLOTS" <<'PY'
import datetime, json, statistics, sys
path, start, end, n, slots = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
starts, latencies, states = {}, [], {}
for line in open(path):
    op = json.loads(line)
    if op["op_code"] == 4:  # CREATE_TRIAL
        starts[len(starts)] = datetime.datetime.fromisoformat(op["datetime_start"])
    if op["op_code"] == 6 and op.get("datetime_complete"):  # SET_TRIAL_STATE_VALUES
        t = op["trial_id"]
        states[t] = op["state"]
        latencies.append((datetime.datetime.fromisoformat(op["datetime_complete"]) - starts[t]).total_seconds())
wall = end - start
complete = sum(1 for s in states.values() if s == 1)
latencies.sort()
p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
print(f"dispatch_overhead_bench: {n} zero-step trials, {slots} at a time: {complete} COMPLETE; "
      f"wall {wall:.2f} s = {1000 * wall / n:.1f} ms per trial; "
      f"trial latency (start -> complete) median {1000 * statistics.median(latencies):.1f} ms, "
      f"p99 {1000 * p99:.1f} ms")
sys.exit(0 if complete == n else 1)
PY
