#!/usr/bin/env bash
# An agent the head declared lost (it was silent for 3 heartbeat intervals: here it is
# SIGSTOPped) registers again when it comes back, instead of exiting on the head's
# "register first"; the head then counts it as a live agent again.  Args: head, agent.
HEAD=$1 AGENT=$2
source tests/integration/lib.sh

"$HEAD" --bind "tcp://127.0.0.1:*" --endpoint_file "$WORK/endpoint" --heartbeat_ms 200 \
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
finish
