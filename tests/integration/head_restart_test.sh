#!/usr/bin/env bash
# The head dies mid-sweep and comes back (issue 6, acceptance 4): head and two agent hosts in
# network namespaces (1 slot each), a sweep of 3 trials of 2 ranks each, so every trial spans
# both hosts. While trial 1 trains, kill -9 of the head, then the same head command again on the
# same address. The trial's trainers must go on untouched; the agents (detached from the head's
# remote shell) and hpo must register again; the new head must adopt the run from both agents
# and give it back to hpo; the sweep must end with its 3 planned trials, all COMPLETE, each
# placed once, trial 1 trained once (one loss trajectory, its pids unchanged).
# Args: head, hpo binaries.
HEAD=$1 HPO=$2
source tests/integration/lib.sh
source tests/integration/netns_lib.sh
make_cluster 2 1
H=$NS_HEAD A=${NS_HOSTS[0]} B=${NS_HOSTS[1]}
ENDPOINT="tcp://$NET.1:5555"
start_head "$WORK/head1.log" "$ENDPOINT" --heartbeat_ms 1000
wait_hosts_up "$WORK/head1.log" "all 2"

write_train_yaml "$WORK/train.yaml" model.max_seq_len=64 train.max_steps=40 train.batch_size=8 \
  train.eval_every_steps=20 train.log_every_steps=5
write_sweep_yaml "$WORK/sweep.yaml" name=restart resources='{gpus_per_trial: 2}' \
  parameters.lr='{values: [1.0e-4, 2.0e-4, 4.0e-4]}' parameters.batch_size='{values: [8]}' \
  search='{method: grid}' max_failures_per_trial=0
ip netns exec "$H" "$HPO" sweep "$WORK/sweep.yaml" --head "$ENDPOINT" > "$WORK/hpo.log" 2>&1 &
hpo_pid=$!
M="$WORK/run/trial-1/metrics.jsonl"
wait_for 120 grep -q '"step": 10,' "$M" || { fail "trial 1 never trained: $(tail -3 "$WORK/hpo.log")"; finish; }
trainers() { pgrep -f -- "[o]utput.dir=$WORK/run/trial-1( |$)" | sort | tr '\n' ' '; }
before=$(trainers)
echo "trial 1 trains (pids $before); kill -9 of the head"
kill -9 "$head_pid"; wait "$head_pid" 2>/dev/null; head_pid=
wait_for 10 grep -q "lost the head" "$WORK/hpo.log" || fail "hpo did not notice the head's loss"
sleep 1
[ "$(trainers)" = "$before" ] || fail "trial 1's trainers changed without a head: '$(trainers)' vs '$before'"
[ -n "$(agent_pid "$A")" ] && [ -n "$(agent_pid "$B")" ] || fail "an agent died with the head"
start_head "$WORK/head2.log" "$ENDPOINT" --heartbeat_ms 1000
restarted=$(date +%s.%N)
wait_for 20 grep -q "found again: run" "$WORK/head2.log" ||
  fail "the new head did not give the run back to hpo: $(tail -5 "$WORK/head2.log")"
echo "run handed back after $(echo "$(date +%s.%N) - $restarted" | bc) s:"
grep -E "adopted run|found again|host .*: agent|already running" "$WORK/head2.log" "$WORK/headlogs/agents/"*.log |
  sed 's/^/  /' | cut -c1-200

wait "$hpo_pid"; rc=$?
tail -6 "$WORK/hpo.log"
[ "$rc" -eq 0 ] || fail "hpo sweep exited $rc"
expect_states "$WORK/run/journal.log" "['COMPLETE', 'COMPLETE', 'COMPLETE']"
placed=$(cat "$WORK/head1.log" "$WORK/head2.log" | grep "placed on" | grep -o "(trial [0-9]*" | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')
[ "$placed" = "1 1 1 " ] || fail "each trial must be placed once, got counts: $placed"
grep -q "adopted run .*(trial 1 " "$WORK/head2.log" || fail "trial 1 was not adopted"
[ "$(grep -c "adopted run .*(trial 1 " "$WORK/head2.log")" -eq 2 ] || fail "trial 1 not adopted from both agents"
steps=$("$PY" -c "
import json,sys
s=[json.loads(l)['step'] for l in open('$M') if 'train/loss' in l]
print('ok' if s == sorted(s) and len(s) == len(set(s)) and s[-1] == 40 else s)")
[ "$steps" = ok ] || fail "trial 1's loss trajectory restarted or stopped early: $steps"
grep -q "eval/spearman" "$M" || fail "trial 1 never evaluated"
stop_head
wait_for 10 agents_gone "$A" "$B" || fail "agents left after the head's shutdown"
finish
