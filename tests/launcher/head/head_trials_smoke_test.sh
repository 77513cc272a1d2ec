#!/usr/bin/env bash
# bench/head_trials_bench, small, as a test: a real head (forked) carries every trial from a
# simulated hpo client to simulated agents and back, up-front and through a window, with
# reports and decisions; the bench exits non-zero unless every trial COMPLETED, every agent
# stayed registered and the head held no run afterwards.
# Args: the head_trials_bench binary.
set -uo pipefail
BENCH=$1

run() {
  local out rc
  out=$("$BENCH" "$@" 2>&1); rc=$?
  echo "$out"
  [ "$rc" -eq 0 ] || { echo "FAIL: head_trials_bench $* exited $rc"; exit 1; }
  local trials completed rate
  trials=$(sed -n 's/^trials \([0-9]*\) .*/\1/p' <<<"$out")
  completed=$(sed -n 's/^  outcomes: \([0-9]*\) COMPLETED.*/\1/p' <<<"$out")
  rate=$(sed -n 's/.* trials\/s \([0-9]*\) .*/\1/p' <<<"$out")
  [ -n "$trials" ] && [ "$completed" = "$trials" ] ||
    { echo "FAIL: $completed of $trials trials completed"; exit 1; }
  [ -n "$rate" ] && [ "$rate" -gt 0 ] || { echo "FAIL: no trials/s figure"; exit 1; }
}

run --agents 16 --slots 4 --trials 300 --rounds 2 --reports_per_trial 0
run --agents 16 --slots 4 --trials 500 --window 128 --reports_per_trial 2
echo PASS
