#!/usr/bin/env bash
# kill -9 of a warm trainer worker mid-trial, with real trainers (configs/lr.yaml shrunk to the
# tiny random BERT on a slice of STS-B, one trial at a time, so that one slot's worker serves the
# trials in sequence):
# 1. Trial 0 runs as the worker's 1st trial ("worker" user attr ".../w-PID#1") and trial 1 as its
#    2nd in the same process (#2); the test SIGKILLs that worker during trial 1. Trial 1 alone
#    is FAIL ("killed by signal 9"); its retry runs first, in a fresh worker (another pid, #1),
#    which serves the later trials too (#2, #3); every other trial is COMPLETE, the sweep exits
#    0 and leaves no process behind.
# 2. resources.reuse_workers=false: fresh trainers, no "worker" attr on any trial; the points
#    that ran warm in 1 end with the same values, bit for bit.
# 3. Each trial's TensorBoard event file holds its scalars and hyperparameters, warm or cold.
# Args: hpo binary.
HPO=$1
source tests/integration/lib.sh
# One intra-op thread per trainer: on a 2-core box beside other tests, more threads fight over
# the cores and a trial takes several times longer (the agent passes its own value on).
export OMP_NUM_THREADS=1

# 1280 training pairs at batch 32: 40 steps, a few seconds a trial on the CPU, so that the kill
# lands mid-trial.
head -1280 data/stsbenchmark/sts-train.csv > "$WORK/sts1280.csv"
head -200 data/stsbenchmark/sts-dev.csv > "$WORK/dev200.csv"
# sweep_args JOURNAL TRIALS [OVERRIDE...]: sets `args` to those of `hpo sweep` of configs/lr.yaml
# on that slice: TRIALS random points (batch 32), one at a time, no pruning.
sweep_args() {
  local journal=$1 trials=$2; shift 2
  args=(configs/lr.yaml --journal "$journal" search.method=random search.random.trials="$trials"
        'parameters.batch_size.values=[32]' max_concurrent_trials=1 early_terminate='{type: none}'
        "trainer.overrides={train.epochs: 1, output.checkpoint: false, output.save: none,
          task.train: $WORK/sts1280.csv, task.eval: $WORK/dev200.csv}" "$@")
}

# 1. The crash.
J="$WORK/run/journal.log"
sweep_args "$J" 4
"$HPO" sweep "${args[@]}" >"$WORK/out.txt" 2>&1 &
hpo_pid=$!
# The agent is hpo's child; the warm worker (`trainer worker`, which execs trainer_torch) is
# the agent's.
agent_pid() { pgrep -P "$hpo_pid" -f 'launcher/agent|/agent ' | head -1; }
wait_for 30 agent_pid || fail "no agent started"
agent=$(agent_pid)
worker_pid() { [ -n "$agent" ] && pgrep -P "$agent" -f 'worker' | head -1; }
# Trial 1 running as the worker's 2nd trial.
second_running() {
  [ "$(pyq "$J" "any(t['number']==1 and t['state']=='RUNNING' and
       t['user_attrs'].get('worker','').endswith('#2') for t in T)")" = True ]
}
if wait_for 60 second_running; then
  victim=$(worker_pid)
  kill -9 "$victim" && echo "killed warm worker $victim during trial 1"
else
  fail "trial 1 never ran as the warm worker's 2nd trial: $(pyq "$J" "[(t['number'], t['state'],
    t['user_attrs'].get('worker')) for t in T]" 2>&1)"
  victim=
fi
wait "$hpo_pid"; rc=$?
grep -E '^(trial|best)' "$WORK/out.txt" | head -20
[ "$rc" -eq 0 ] || fail "the sweep exited $rc: $(tail -5 "$WORK/out.txt")"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"

pyq "$J" "'\n'.join(f\"trial {t['number']} {t['state']} worker {t['user_attrs'].get('worker')}\"
                   for t in T)"
# attr N KEY: trial N's user attr KEY ("" when none).
attr() { pyq "$J" "next((t['user_attrs'].get('$2', '') for t in T if t['number']==$1), '')"; }
# pid_of WORKER_ATTR: the pid in "AGENT/slot-S/w-PID#N".
pid_of() { local w=${1##*/w-}; echo "${w%%#*}"; }
w0=$(attr 0 worker) w1=$(attr 1 worker)
[[ "$w0" == *"#1" ]] || fail "trial 0 was not a fresh worker's 1st trial: worker '$w0'"
[[ "$w1" == *"#2" ]] || fail "trial 1 was not the worker's 2nd trial: worker '$w1'"
[ -n "$w0" ] && [ "$(pid_of "$w0")" = "$(pid_of "$w1")" ] ||
  fail "trials 0 and 1 ran in different workers: '$w0', '$w1'"
[ -z "$victim" ] || [ "$(pid_of "$w1")" = "$victim" ] ||
  fail "the killed process $victim is not trial 1's worker '$w1'"

[ "$(count_state "$J" FAIL)" -eq 1 ] || fail "want exactly one FAIL trial"
[ "$(pyq "$J" "[t['number'] for t in T if t['state']=='FAIL']")" = "[1]" ] ||
  fail "the FAIL trial is not trial 1"
attr 1 fail_reason | grep -q 'killed by signal 9' ||
  fail "trial 1's fail_reason does not say killed by signal 9: $(attr 1 fail_reason)"
# Its retry: the next trial, COMPLETE, the 1st trial of a fresh worker.
retry=$(pyq "$J" "[t['number'] for t in T if t['system_attrs'].get('failed_trial')==1]")
[ "$retry" = "[2]" ] || fail "want trial 2 (only) to retry trial 1, got $retry"
[ "$(pyq "$J" "[t['state'] for t in T if t['number']==2]")" = "['COMPLETE']" ] ||
  fail "the retry is not COMPLETE"
w2=$(attr 2 worker)
[[ "$w2" == *"#1" ]] || fail "the retry was not a fresh worker's 1st trial: worker '$w2'"
[ -n "$w2" ] && [ "$(pid_of "$w2")" != "$(pid_of "$w1")" ] ||
  fail "the retry ran in the killed worker: '$w2'"
# The fresh worker serves the trials after it: 3 and 4 as its 2nd and 3rd.
for n in 3 4; do
  w=$(attr "$n" worker)
  [ "$(pid_of "$w")" = "$(pid_of "$w2")" ] && [[ "$w" == *"#$((n - 1))" ]] ||
    fail "trial $n did not run in the fresh worker as #$((n - 1)): worker '$w'"
done
[ "$(pyq "$J" 'len(T)')" -eq 5 ] || fail "want 5 trials (4 points and a retry)"
[ "$(count_state "$J" COMPLETE)" -eq 4 ] ||
  fail "want every other trial COMPLETE: $(pyq "$J" "[t['state'] for t in T]")"

# 2. reuse_workers=false: a fresh trainer per trial, no "worker" attr. The same seed draws the
# same first 3 points, which trials 0, 2 (the retry) and 3 (the fresh worker's 2nd) ran warm:
# cold and warm trials of a point end with the same value, bit for bit.
J2="$WORK/cold/journal.log"
sweep_args "$J2" 3 resources.reuse_workers=false
"$HPO" sweep "${args[@]}" >"$WORK/cold.txt" 2>&1 ||
  fail "the cold sweep failed: $(tail -5 "$WORK/cold.txt")"
expect_states "$J2" "['COMPLETE', 'COMPLETE', 'COMPLETE']"
[ "$(pyq "$J2" "[t['number'] for t in T if 'worker' in t['user_attrs']]")" = "[]" ] ||
  fail "a cold trial has a worker attr"
wait_for 5 no_leftovers || fail "processes left behind by the cold sweep: $(pgrep -af "$WORK")"
# 3. Every trial's TensorBoard event file (issue 20) holds its scalars and, from the
# TUNEFLEET_HPARAMS that hpo hands it, the HParams view's session start and end: cold trials and
# warm ones (the worker sets each trial's environment).
for dir in "$WORK/cold/trial-0" "$WORK/cold/trial-2" "$WORK/run/trial-3" "$WORK/run/trial-4"; do
  f=$(ls "$dir"/tensorboard/events.out.tfevents.* 2>/dev/null | head -1)
  [ -n "$f" ] || { fail "$dir wrote no event file"; continue; }
  for s in brain.Event:2 train/loss eval/spearman _hparams_/session_start_info lr_effective \
           _hparams_/session_end_info; do
    grep -qa "$s" "$f" || fail "$f lacks $s"
  done
done

# values JOURNAL NUMBERS: the (lr, repr(value)) of those trials (a Python tuple of numbers).
values() { pyq "$1" "[(t['params']['lr'], repr(t['value'])) for t in T if t['number'] in $2]"; }
cold=$(values "$J2" "(0, 1, 2)") warm=$(values "$J" "(0, 2, 3)")
echo "cold (lr, value): $cold"
[ "$cold" = "$warm" ] || fail "warm trials 0, 2, 3 differ from cold ones: $warm"
finish
