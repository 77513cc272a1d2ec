#!/usr/bin/env bash
# Ctrl-C (SIGINT) of a dev-mode sweep: hpo stops the running trials, ends them in the journal as
# FAIL "interrupted" (none is left RUNNING), shuts its head and agent down, exits non-zero, and
# leaves no process behind; `--resume` then finishes the sweep.  Args: hpo binary.
HPO=$1
source tests/integration/lib.sh

J="$WORK/run/journal.log"
start_synthetic_sweep "$WORK/out1.txt" "$J" 6 2 0.1
wait_for 40 completed "$J" 1 || fail "no trial completed"
kill -INT "$hpo_pid"
start=$(date +%s)
wait "$hpo_pid"; rc=$?
echo "hpo exited $rc $(( $(date +%s) - start )) s after SIGINT"
[ "$rc" -ne 0 ] || fail "an interrupted sweep exited 0"
[ $(( $(date +%s) - start )) -le 20 ] || fail "hpo took more than 20 s to stop"
grep -q 'interrupted' "$WORK/out1.txt" || fail "no word of the interruption: $(tail -3 "$WORK/out1.txt")"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
[ "$(count_state "$J" RUNNING)" -eq 0 ] || fail "trials left RUNNING"
pyq "$J" "all(t['user_attrs'].get('fail_reason','').startswith('interrupted') for t in T if t['state']=='FAIL')" |
  grep -q True || fail "a FAIL trial is not marked interrupted"

"$HPO" sweep "${args[@]}" --resume >"$WORK/out2.txt" 2>&1 || fail "resume failed: $(tail -3 "$WORK/out2.txt")"
[ "$(pyq "$J" "len({t['user_attrs']['point'] for t in T if t['state']=='COMPLETE'})")" -eq 6 ] ||
  fail "the 6 planned points did not all complete after --resume"
wait_for 5 no_leftovers || fail "processes left behind after resume"
finish
