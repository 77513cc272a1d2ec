#!/usr/bin/env bash
# Multi-rank trials through the whole machinery: `hpo sweep` in dev mode with 2 ranks per trial
# (the agent starts 2 trainer processes, Gloo between them), median pruning after the first
# trial. Every trial ends COMPLETE or PRUNED, none FAIL; lr_effective counts both ranks
# (lr * batch * 2 / 32); a pruned trial's two ranks both stop at the same step (the decision
# reaches rank 1 through the process group) and exit cleanly; nothing is left behind. Both ranks
# run in the slots' warm workers, the same two processes for every trial, and from the second
# trial on they reuse the first trial's process group (trainer/distributed/trial_group.h) instead of
# connecting a new one.
# Args: hpo binary.
HPO=$1
source tests/integration/lib.sh
write_sweep_yaml "$WORK/sweep.yaml" name=ddp-sweep \
  trainer='{config: configs/sbert_stsb.yaml, overrides: {train.epochs: 1, train.eval_every_steps: 5, train.log_every_steps: 5}}' \
  resources='{gpus_per_trial: 2}' parameters.lr='{distribution: log_uniform, min: 1.0e-6, max: 1.0e-3}' \
  parameters.batch_size='{values: [128]}' search='{method: random, random: {trials: 5, seed: 3}}' \
  early_terminate='{type: median, n_startup_trials: 1, n_warmup_steps: 0, interval_steps: 1}' \
  max_failures_per_trial=0
out=$("$HPO" sweep "$WORK/sweep.yaml" 2>"$WORK/stderr.txt"); rc=$?
echo "$out" | tail -8
[ "$rc" -eq 0 ] || { fail "hpo sweep exited $rc: $(tail -5 "$WORK/stderr.txt")"; finish; }
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
J="$WORK/run/journal.log"
n=$(pyq "$J" 'len(T)')
[ "$n" -eq 5 ] || fail "expected 5 trials, got $n"
[ "$(pyq "$J" "sum(t['state'] in ('COMPLETE','PRUNED') for t in T)")" -eq "$n" ] ||
  fail "not every trial finished: $(pyq "$J" "[t['state'] for t in T]")"
pyq "$J" "all(abs(t['user_attrs']['lr_effective'] - t['params']['lr']*128*2/32) <= 1e-12*t['user_attrs']['lr_effective'] for t in T)" |
  grep -q True || fail "lr_effective does not count 2 ranks"
workers=$(pyq "$J" "sorted(set(t['user_attrs'].get('worker', 'none').split('#')[0] for t in T))")
echo "rank 0's warm workers: $workers"
[ "$(pyq "$J" "len(set(t['user_attrs'].get('worker', 'none').split('#')[0] for t in T))")" -eq 1 ] &&
  ! echo "$workers" | grep -q none || fail "rank 0 did not run in one warm worker: $workers"
grep -q "^group    gloo, 2 ranks: a new group, connected in" "$WORK/run/logs/trial-0/rank-0.log" ||
  fail "trial 0 did not connect a new group: $(grep '^group' "$WORK/run/logs/trial-0/rank-0.log")"
for t in 1 2 3 4; do
  grep -q "^group    gloo, 2 ranks: the workers' group from their previous trial, reused" \
    "$WORK/run/logs/trial-$t/rank-0.log" ||
    fail "trial $t did not reuse the group: $(grep '^group' "$WORK/run/logs/trial-$t/rank-0.log")"
done
pruned=$(pyq "$J" "' '.join(str(t['number']) for t in T if t['state']=='PRUNED')")
[ -n "$pruned" ] || fail "the median pruner pruned nothing"
for t in $pruned; do
  logs="$WORK/run/logs/trial-$t"
  s0=$(grep -o 'stopped at step [0-9]*' "$logs/rank-0.log" | head -1)
  s1=$(grep -o 'stopped at step [0-9]*' "$logs/rank-1.log" | head -1)
  echo "trial $t: rank 0 $s0, rank 1 $s1"
  [ -n "$s0" ] && [ "$s0" = "$s1" ] || fail "trial $t: ranks did not stop together ($s0 / $s1)"
  grep -q "^ddp      2 ranks (gloo)" "$logs/rank-0.log" || fail "trial $t did not run 2 ranks"
done
finish
