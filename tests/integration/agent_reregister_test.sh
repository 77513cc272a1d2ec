#!/usr/bin/env bash
# 1. An agent the head declared lost (it was silent for 3 heartbeat intervals: here it is
# SIGSTOPped) registers again when it comes back, instead of exiting on the head's
# "register first"; the head then counts it as a live agent again. 2. An agent whose head dies
# for good gives up after --head_grace_s with one line.  Args: head, agent.
HEAD=$1 AGENT=$2
source tests/integration/lib.sh

"$HEAD" --endpoint_file "$WORK/endpoint" --heartbeat_ms 200 \
  2>"$WORK/head.log" & head_pid=$!
wait_for 5 test -s "$WORK/endpoint" || fail "the head did not bind: $(cat "$WORK/head.log")"
"$AGENT" --head "$(cat "$WORK/endpoint")" --slots 1 --name a --log_dir "$WORK/logs" \
  2>"$WORK/agent.log" & agent_pid=$!
registered() { [ "$(grep -c 'agent a registered' "$WORK/head.log")" -ge "$1" ]; }
wait_for 5 registered 1 || fail "the agent did not register: $(cat "$WORK/agent.log")"

kill -STOP "$agent_pid"
wait_for 5 grep -q 'lost' "$WORK/head.log" || fail "the head did not declare the stopped agent lost"
kill -CONT "$agent_pid"
wait_for 5 registered 2 || fail "the agent did not register again: $(tail -3 "$WORK/agent.log")"
sleep 1
kill -0 "$agent_pid" 2>/dev/null || fail "the agent exited: $(tail -3 "$WORK/agent.log")"
grep -q 'agent a lost' "$WORK/head.log" || fail "head log lacks the loss: $(cat "$WORK/head.log")"

kill -TERM "$agent_pid" "$head_pid"
wait "$agent_pid" "$head_pid" 2>/dev/null

# A head that dies and does not come back: the agent keeps registering for --head_grace_s, then
# exits with one line (and would stop its runs).
"$HEAD" --bind "ipc://$XDG_RUNTIME_DIR/head2.sock" --endpoint_file "$WORK/endpoint2" --heartbeat_ms 200 \
  2>"$WORK/head2.log" & head_pid=$!
wait_for 5 test -s "$WORK/endpoint2" || fail "the second head did not bind"
"$AGENT" --head "$(cat "$WORK/endpoint2")" --slots 1 --name b --log_dir "$WORK/logs2" \
  --head_grace_s 2 2>"$WORK/agent2.log" & agent_pid=$!
wait_for 5 grep -q 'agent b registered' "$WORK/head2.log" || fail "agent b did not register"
kill -9 "$head_pid"; wait "$head_pid" 2>/dev/null
killed=$(date +%s)
rc=0; wait "$agent_pid" || rc=$?
took=$(( $(date +%s) - killed ))
echo "agent b exited $rc ${took} s after the head died: $(tail -1 "$WORK/agent2.log")"
[ "$rc" -ne 0 ] || fail "agent b exited 0 without a head"
grep -q "lost the head .*keeping\|lost the head .*no runs here" "$WORK/agent2.log" ||
  fail "agent b did not say it lost the head: $(tail -3 "$WORK/agent2.log")"
tail -1 "$WORK/agent2.log" | grep -q "did not come back within 2s" ||
  fail "agent b's last line: $(tail -1 "$WORK/agent2.log")"
[ "$took" -le 6 ] || fail "agent b took ${took} s (liveness 0.6 s + grace 2 s)"
finish
