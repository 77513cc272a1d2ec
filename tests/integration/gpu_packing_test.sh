#!/usr/bin/env bash
# Trial packing on an 8-GPU node (issue 7, run 2), on a machine without GPUs: the fake CUDA
# driver tests/launcher:libcuda.so.1, first on LD_LIBRARY_PATH, makes the agent see 8 GPUs.
# hpo's dev mode (a real head and agent, synthetic trainers of 12 steps x 0.25 s) runs
#   packed: 8 single-GPU trials, max_concurrent_trials 8;
#   wide:   2 trials of 4 GPUs (4 ranks each), max_concurrent_trials 2;
#   serial: the 8 single-GPU trials of `packed`, one at a time.
# Every trainer's environment is sampled from /proc every 50 ms (gpu_packing_check.py): at no
# moment two trainers on one GPU or a trainer with other than one GPU, every GPU busy at some
# moment, each 4-rank trial on 4 distinct GPUs. packed must take less than half of serial.
# Args: hpo binary, the fake libcuda.so.1, gpu_packing_check.py.
HPO=$1 FAKE_CUDA=$2 CHECK=$3
source tests/integration/lib.sh

export LD_LIBRARY_PATH="$(dirname "$(readlink -f "$FAKE_CUDA")")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TUNEFLEET_FAKE_GPUS=8
[ "$(basename "$(readlink -f "$FAKE_CUDA")")" = libcuda.so.1 ] || { fail "not a libcuda.so.1: $FAKE_CUDA"; finish; }

# sweep NAME GPUS_PER_TRIAL CONCURRENT LRS: runs it, sampling its trainers; prints the wall time.
sweep() {
  cat > "$WORK/$1.yaml" <<YAML
name: pack-$1
metric: {name: eval/spearman, goal: maximize}
trainer: {synthetic: {steps: 12, seconds_per_step: 0.25, noise: 0.0, seed: 0}}
resources: {gpus_per_trial: $2}
parameters:
  lr: {values: [$4]}
  batch_size: {values: [32]}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: grid}
early_terminate: {type: none}
max_concurrent_trials: $3
max_failures_per_trial: 0
journal: $WORK/$1/journal.log
YAML
  rm -f "$WORK/$1.stop"
  "$PY" "$CHECK" sample "pack-$1" "$WORK/$1.samples" "$WORK/$1.stop" &
  local sampler=$! t0 rc
  t0=$(date +%s%N)
  "$HPO" sweep "$WORK/$1.yaml" > "$WORK/$1.log" 2>&1; rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  touch "$WORK/$1.stop"; wait "$sampler"
  echo "$1: exit $rc, wall ${ms} ms, $(grep -c '^trial [0-9]* COMPLETE' "$WORK/$1.log") trials complete"
  [ "$rc" -eq 0 ] || fail "$1: hpo sweep exited $rc: $(tail -3 "$WORK/$1.log")"
  eval "wall_$1=$ms"
}

EIGHT="1.0e-5, 2.0e-5, 3.0e-5, 5.0e-5, 1.0e-4, 2.0e-4, 3.0e-4, 5.0e-4"
sweep packed 1 8 "$EIGHT"
grep -q "using 8 of 8 GPU(s): Fake GPU 0" "$WORK/packed/logs/agent.log" ||
  fail "the agent did not take the 8 fake GPUs: $(grep -h "GPU\|slot" "$WORK/packed/logs/agent.log" | head -2)"
"$PY" "$CHECK" check "$WORK/packed.samples" 1 8 8 || fail "packed: see above"
# hpo says where each trial ran (its lines, the journal's user attr "placement"): 8 distinct
# GPUs, then the two halves.
[ "$(pyq "$WORK/packed/journal.log" "len({t['user_attrs'].get('placement') for t in T})")" -eq 8 ] ||
  fail "packed: the journal's placements: $(pyq "$WORK/packed/journal.log" "[t['user_attrs'].get('placement') for t in T]")"
[ "$(grep -o ' on local:[0-9]*$' "$WORK/packed.log" | sort -u | wc -l)" -eq 8 ] ||
  fail "packed: hpo's lines do not name 8 GPUs: $(grep -o ' on .*' "$WORK/packed.log" | tr '\n' ' ')"
sweep wide 4 2 "1.0e-4, 2.0e-4"
"$PY" "$CHECK" check "$WORK/wide.samples" 4 2 8 || fail "wide: see above"
[ "$(grep -o ' on local:.*' "$WORK/wide.log" | sort | tr '\n' ' ')" = " on local:0-3  on local:4-7 " ] ||
  fail "wide: hpo's lines say $(grep -o ' on .*' "$WORK/wide.log" | tr '\n' ' ')"
sweep serial 1 1 "$EIGHT"
"$PY" "$CHECK" check "$WORK/serial.samples" 1 8 1 || fail "serial: see above"
echo "packed ${wall_packed:-?} ms vs serial ${wall_serial:-?} ms"
[ -n "${wall_packed:-}" ] && [ -n "${wall_serial:-}" ] && [ $((2 * wall_packed)) -lt "$wall_serial" ] ||
  fail "packing 8 trials on 8 GPUs did not halve the wall time"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
