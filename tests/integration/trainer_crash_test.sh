#!/usr/bin/env bash
# kill -9 of a trainer mid-trial: the trial is FAIL with its exit status, retried as a new trial
# with the same params (Optuna's RetryFailedTrialCallback links), and the sweep finishes.
# Args: hpo binary.
HPO=$1
source tests/integration/lib.sh

J="$WORK/run/journal.log"
"$HPO" sweep configs/synthetic.yaml --journal "$J" search.method=random search.random.trials=6 \
  max_concurrent_trials=2 early_terminate='{type: none}' trainer.synthetic.seconds_per_step=0.1 \
  >"$WORK/out.txt" 2>&1 &
hpo_pid=$!
# The agent is hpo's child; trainers are the agent's children.
agent_pid() { pgrep -P "$hpo_pid" -f 'launcher/agent|/agent ' | head -1; }
wait_for 20 agent_pid || fail "no agent started"
agent=$(agent_pid)
trainer_pid() { pgrep -P "$agent" | head -1; }
wait_for 20 trainer_pid || fail "no trainer started"
sleep 0.5  # mid-trial: a few steps reported
victim=$(trainer_pid)
kill -9 "$victim"
echo "killed trainer $victim"
wait "$hpo_pid"; rc=$?
cat "$WORK/out.txt" | grep -E '^(trial|  last|best)' | head -20
[ "$rc" -eq 0 ] || fail "the sweep exited $rc"
wait_for 5 no_leftovers || fail "processes left behind"
failed=$(pyq "$J" "[t['number'] for t in T if t['state']=='FAIL']")
echo "failed trials: $failed"
[ "$(pyq "$J" "sum(t['state']=='FAIL' for t in T)")" -eq 1 ] || fail "want exactly one FAIL trial"
pyq "$J" "[t['user_attrs']['fail_reason'] for t in T if t['state']=='FAIL'][0]" | grep -q 'killed by signal 9' ||
  fail "the FAIL trial does not say it was killed by signal 9"
# Its retry: same params, links back, COMPLETE.
pyq "$J" "[ (r['state'], r['params']==f['params'], r['system_attrs'].get('failed_trial')==f['number'], r['system_attrs'].get('retry_history')==[f['number']]) for f in T if f['state']=='FAIL' for r in T if r['system_attrs'].get('failed_trial')==f['number']]" |
  grep -q "('COMPLETE', True, True, True)" || fail "no linked COMPLETE retry of the failed trial"
[ "$(pyq "$J" "sum(t['state']=='COMPLETE' for t in T)")" -eq 6 ] || fail "want 6 COMPLETE trials"
finish
