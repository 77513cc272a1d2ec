#!/usr/bin/env bash
# A cluster on one machine (issue 6, acceptance 1): a head and two agent "hosts" in three network
# namespaces joined by a bridge. `head --nodes hosts.txt --remote_shell "ip netns exec {host}"`
# starts the agents itself and reports each host up within seconds; a host whose shell fails (no
# such namespace) is reported with the shell's exit code and last line. `hpo sweep --head` runs
# one 2-rank trial, placed across both hosts (Gloo between their addresses); its losses,
# evaluations and final weights equal one process's with the global batch (1e-5). SIGTERM to
# the head shuts everything down.
# Args: head, hpo, trainer binaries; compare_runs.py.
HEAD=$1 HPO=$2 TRAINER=$3 COMPARE=$4
source tests/integration/lib.sh
source tests/integration/netns_lib.sh
make_cluster 2
H=$NS_HEAD A=${NS_HOSTS[0]} B=${NS_HOSTS[1]}
echo "head $H ($NET.1), hosts $A ($NET.2), $B ($NET.3)"

# 1. The head starts the agents and reports each host.
# A third host has no namespace: its shell fails, and the head must say so.
Z=tfz$$
write_hosts 1 "$Z"
start_head "$WORK/head.log" "tcp://$NET.1:0" --endpoint_file "$WORK/endpoint"
start=$(date +%s.%N)
wait_hosts_up "$WORK/head.log" "2 of 3"
echo "hosts settled after $(echo "$(date +%s.%N) - $start" | bc) s:"
grep -E "host ($A|$B|$Z): " "$WORK/head.log" | grep -v starting | cut -d']' -f2
grep -q "host $A: agent up" "$WORK/head.log" && grep -q "host $B: agent up" "$WORK/head.log" ||
  fail "a host's agent is not reported up"
grep -qE "host $Z: the remote shell ended \(exit code [0-9]+\) before an agent registered: .*$Z" \
  "$WORK/head.log" || fail "the failed host is not reported with its reason"

# 2. One 2-rank trial across both hosts, against one process with the global batch.
write_ddp_train_yaml "$WORK/train.yaml" train.ddp_timeout_s=
write_sweep_yaml "$WORK/sweep.yaml" name=cluster resources='{gpus_per_trial: 2}' \
  parameters.lr='{values: [5.0e-5]}' parameters.batch_size='{values: [8]}' \
  search='{method: random, random: {trials: 1, seed: 0}}' max_failures_per_trial=0
ip netns exec "$H" "$HPO" sweep "$WORK/sweep.yaml" --head "$(cat "$WORK/endpoint")" \
  > "$WORK/hpo.log" 2>&1 || fail "hpo sweep failed: $(tail -5 "$WORK/hpo.log")"
tail -3 "$WORK/hpo.log"
placed=$(grep "placed on" "$WORK/head.log" | head -1)
echo "${placed#*] }"
echo "$placed" | grep -q "$A" && echo "$placed" | grep -q "$B" || fail "the trial did not span both hosts"
# lr_effective = 5e-5 * 8 * 2 / 32 = 2.5e-5 for the global batch of 16.
"$TRAINER" train --config "$WORK/train.yaml" train.lr=2.5e-5 output.dir="$WORK/one" > "$WORK/one.log" 2>&1 ||
  fail "one process: $(tail -2 "$WORK/one.log")"
"$PY" "$COMPARE" "$WORK/one" "$WORK/run/trial-0" 1e-5 || fail "the 2-host trial differs from one process"

# 3. The head shuts the cluster down.
stop_head || fail "head exited $?"
# ([-] keeps the pattern from matching the command that searches for it.)
wait_for 10 agents_gone "$A" "$B" || fail "agents left: $(agent_pid "$A") $(agent_pid "$B")"
finish
