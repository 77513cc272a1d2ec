#!/usr/bin/env bash
# A host dies mid-trial (issue 6, acceptance 2): head and two agent hosts in network namespaces
# (2 slots each); a 2-rank trial runs on one host; kill -9 of that host's agent. The head must
# declare it lost within 3 heartbeat intervals (1 s each), fail the run, and hpo must retry the
# trial, which completes on the surviving host; the journal holds exactly one FAIL and one
# COMPLETE attempt of the point; the dead host's trainers are gone.
# Args: head, hpo binaries.
HEAD=$1 HPO=$2
source tests/integration/lib.sh
source tests/integration/netns_lib.sh
make_cluster 2 2
H=$NS_HEAD A=${NS_HOSTS[0]} B=${NS_HOSTS[1]}
start_head "$WORK/head.log" "tcp://$NET.1:0" --endpoint_file "$WORK/endpoint" --heartbeat_ms 1000
wait_hosts_up "$WORK/head.log" "all 2"

write_train_yaml "$WORK/train.yaml" train.max_steps=120 train.batch_size=16 train.eval_every_steps=60 \
  train.log_every_steps=5
write_sweep_yaml "$WORK/sweep.yaml" name=failover resources='{gpus_per_trial: 2}' \
  parameters.lr='{values: [1.0e-4]}' parameters.batch_size='{values: [16]}' \
  search='{method: random, random: {trials: 1, seed: 0}}' max_failures_per_trial=1
ip netns exec "$H" "$HPO" sweep "$WORK/sweep.yaml" --head "$(cat "$WORK/endpoint")" \
  > "$WORK/hpo.log" 2>&1 &
hpo_pid=$!
wait_for 30 test -s "$WORK/run/trial-0/metrics.jsonl" || { fail "trial 0 never trained"; finish; }
first=$(grep "placed on" "$WORK/head.log" | head -1)
victim=$A survivor=$B
echo "$first" | grep -q "placed on $B" && { victim=$B; survivor=$A; }
echo "${first#*] }; killing the agent of $victim"
kill -9 "$(agent_pid "$victim")"
killed=$(date +%s.%N)
wait_for 10 grep -q "agent $victim lost" "$WORK/head.log" || fail "the head never declared $victim lost"
detected=$(echo "$(date +%s.%N) - $killed" | bc)
echo "lost after ${detected} s: $(grep "agent $victim lost" "$WORK/head.log" | head -1 | cut -d']' -f2)"
(( $(echo "$detected <= 4.0" | bc) )) || fail "detection took ${detected} s (3 heartbeats: 3 s)"

wait "$hpo_pid"; rc=$?
tail -4 "$WORK/hpo.log"
[ "$rc" -eq 0 ] || fail "hpo sweep exited $rc"
expect_states "$WORK/run/journal.log" "['FAIL', 'COMPLETE']"
second=$(grep "placed on" "$WORK/head.log" | sed -n 2p)
echo "${second#*] }"
echo "$second" | grep -q "placed on $survivor (rank 0-1)" || fail "the retry did not run on $survivor"
[ "$(grep -c "placed on" "$WORK/head.log")" -eq 2 ] || fail "more than two placements"
wait_for 10 agents_gone "$victim" || fail "the killed agent is still there"
[ -z "$(pgrep -f -- "[o]utput.dir=$WORK/run/trial-0( |$)")" ] ||
  fail "trial 0's trainers outlived their agent: $(pgrep -af -- "[o]utput.dir=$WORK/run/trial-0( |$)")"
stop_head
wait_for 10 agents_gone "$A" "$B" || fail "agents left"
finish
