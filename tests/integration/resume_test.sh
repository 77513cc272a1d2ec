#!/usr/bin/env bash
# kill -9 of hpo mid-sweep: its head, agent and trainers die with it; `--resume` keeps every
# finished trial, reruns only the points that were running, and ends with the planned points
# each finished once.  Args: hpo binary.
HPO=$1
source tests/integration/lib.sh

J="$WORK/run/journal.log"
start_synthetic_sweep "$WORK/out1.txt" "$J" 8 2 0.05
wait_for 40 completed "$J" 3 || fail "three trials never completed"
kill -9 "$hpo_pid"
wait "$hpo_pid" 2>/dev/null
echo "killed hpo $hpo_pid"
wait_for 5 no_leftovers || fail "head/agent/trainers outlived hpo: $(pgrep -af "$WORK")"
before=$(pyq "$J" "sorted((t['number'], t['params']['lr'], t['value']) for t in T if t['state']=='COMPLETE')")
running=$(count_state "$J" RUNNING)
echo "before resume: complete $before; running $running"

"$HPO" sweep "${args[@]}" >"$WORK/out2.txt" 2>&1 && echo "first run unexpectedly accepted a used journal" && fail "no --resume check"
grep -q 'pass --resume' "$WORK/out2.txt" || fail "reusing a journal without --resume is not refused clearly"
"$HPO" sweep "${args[@]}" --resume >"$WORK/out3.txt" 2>&1 || fail "resume failed: $(tail -3 "$WORK/out3.txt")"
grep -E '^resuming' "$WORK/out3.txt"
wait_for 5 no_leftovers || fail "processes left behind after resume"
after=$(pyq "$J" "sorted((t['number'], t['params']['lr'], t['value']) for t in T if t['state']=='COMPLETE' and t['number'] in [b[0] for b in $before])")
[ "$before" = "$after" ] || fail "completed trials changed: $before vs $after"
# Every planned point finished exactly once; interrupted attempts are FAIL "interrupted".
pyq "$J" "sorted(t['user_attrs']['point'] for t in T if t['state']=='COMPLETE') == list(range(8))" | grep -q True ||
  fail "points finished: $(pyq "$J" "sorted(t['user_attrs']['point'] for t in T if t['state']=='COMPLETE')")"
[ "$(pyq "$J" "sum(t['state']=='FAIL' and t['user_attrs'].get('fail_reason')=='interrupted' for t in T)")" -eq "$running" ] ||
  fail "the $running interrupted trials are not marked FAIL interrupted"
[ "$(count_state "$J" RUNNING)" -eq 0 ] || fail "trials left RUNNING"
finish
