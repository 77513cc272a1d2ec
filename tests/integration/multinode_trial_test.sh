#!/usr/bin/env bash
# One data-parallel trial across two "machines" on one host (issue 31, acceptance 2): two network
# namespaces, each with its own host name (a UTS namespace per process tree) and, on a host of 4+
# GPUs, two GPUs, joined by a veth pair (tests/integration/netns_lib.sh's make_host_pair). A head
# in the first, an agent in each (named after its namespace's host name, 2 slots), and
# `hpo sweep --head` runs one 4-rank trial: 2 ranks on each host.
#   - With GPUs: NCCL between the ranks; its NCCL_DEBUG log must show the network transport
#     (NET/Socket over tfnet0) between the namespaces, since each side is another host to NCCL.
#   - Without (CI): Gloo over tfnet0.
# A host with 1-3 GPUs cannot run either form: the test says so and passes.
# Needs root (CI runs as root), ip (iproute2) and unshare (util-linux).
# Args: head, agent, hpo, trainer binaries.
HEAD=$1 AGENT=$2 HPO=$3 TRAINER=$4
source tests/integration/lib.sh
source tests/integration/netns_lib.sh
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$GPUS" -ge 1 ] && [ "$GPUS" -lt 4 ]; then
  echo "SKIPPED: this host has $GPUS GPU(s); the test needs 4 (NCCL) or none (Gloo)"
  exit 0
fi
command -v unshare > /dev/null || { fail "unshare (util-linux) is missing"; finish; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
make_host_pair
A=${NS_HOSTS[0]} B=${NS_HOSTS[1]}
HA=tfnode-a-$$ HB=tfnode-b-$$
MODE=$([ "$GPUS" -ge 4 ] && echo "NCCL, GPUs 0,1 and 2,3" || echo "Gloo, CPU ranks")
echo "hosts $HA ($A, $NET.1) and $HB ($B, $NET.2), joined by a veth pair; $MODE"

# in_host NS HOSTNAME CMD...: CMD in network namespace NS under its own host name; it execs,
# so call it in the background (&): $! is then the pid of CMD itself.
in_host() {
  local ns=$1 name=$2; shift 2
  exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
}

printf '%s slots=2\n%s slots=2\n' "$HA" "$HB" > "$WORK/hosts.txt"
in_host "$A" "$HA" "$HEAD" --nodes "$WORK/hosts.txt" --bind "tcp://$NET.1:0" --insecure \
  --start_agents none --endpoint_file "$WORK/endpoint" --log_dir "$WORK/headlogs" \
  > "$WORK/head.log" 2>&1 &
head_pid=$!
wait_for 20 test -s "$WORK/endpoint" || { fail "the head did not start: $(tail -3 "$WORK/head.log")"; finish; }
ENDPOINT=$(cat "$WORK/endpoint")
gpu_a=() gpu_b=()
[ "$GPUS" -ge 4 ] && gpu_a=(--gpu_ids 0,1) && gpu_b=(--gpu_ids 2,3)
# No --name: each agent registers under its namespace's host name.
in_host "$A" "$HA" "$AGENT" --head "$ENDPOINT" --slots 2 --address "$NET.1" "${gpu_a[@]}" \
  --log_dir "$WORK/logs-a" > "$WORK/agent-a.log" 2>&1 &
in_host "$B" "$HB" "$AGENT" --head "$ENDPOINT" --slots 2 --address "$NET.2" "${gpu_b[@]}" \
  --log_dir "$WORK/logs-b" > "$WORK/agent-b.log" 2>&1 &
both_registered() { grep -q "agent $HA registered" "$WORK/head.log" && grep -q "agent $HB registered" "$WORK/head.log"; }
wait_for 20 both_registered ||
  { fail "the agents did not register: $(tail -3 "$WORK/head.log" "$WORK"/agent-*.log)"; finish; }
grep -E "agent ($HA|$HB) registered" "$WORK/head.log" | cut -d']' -f2

# One 4-rank trial, 12 steps of bert-tiny at batch 8 a rank.
write_train_yaml "$WORK/train.yaml" train.max_steps=12 train.batch_size=8 train.ddp_timeout_s=60 \
  train.log_every_steps=4
write_sweep_yaml "$WORK/sweep.yaml" name=multinode \
  resources="{gpus_per_trial: 4, env: {NCCL_DEBUG: INFO, NCCL_DEBUG_SUBSYS: 'INIT,NET', NCCL_SOCKET_IFNAME: tfnet0, NCCL_IB_DISABLE: '1', NCCL_NVLS_ENABLE: '0', GLOO_SOCKET_IFNAME: tfnet0}}" \
  parameters.lr='{values: [1.0e-4]}' parameters.batch_size='{values: [8]}' \
  search='{method: grid}' max_failures_per_trial=0
ip netns exec "$A" "$HPO" sweep "$WORK/sweep.yaml" --head "$ENDPOINT" > "$WORK/hpo.log" 2>&1 ||
  fail "hpo sweep failed: $(tail -5 "$WORK/hpo.log")"
tail -2 "$WORK/hpo.log"
placed=$(grep "placed on" "$WORK/head.log" | head -1)
echo "${placed#*] }"
echo "$placed" | grep -q "$HA" && echo "$placed" | grep -q "$HB" || fail "the trial did not span both hosts"
LOGS=$WORK/run/logs/trial-0
[ "$(ls "$LOGS"/rank-*.log 2>/dev/null | wc -l)" -eq 4 ] || fail "expected 4 rank logs in $LOGS"
grep -h "^ddp " "$LOGS/rank-0.log" || fail "rank 0 has no ddp line: $(tail -3 "$LOGS/rank-0.log")"
if [ "$GPUS" -ge 4 ]; then
  grep -qE "^ddp +4 ranks \(nccl\)" "$LOGS/rank-0.log" || fail "the ranks did not use NCCL"
  # NCCL's own words: the socket interface it chose, and channels between the hosts over it.
  grep -h "NET/Socket : Using" "$LOGS"/rank-*.log | sed 's/^.*NCCL INFO/  NCCL INFO/' | sort -u | head -2
  cross=$(grep -h "via NET/Socket" "$LOGS"/rank-*.log | sed 's/^.*NCCL INFO/NCCL INFO/' | sort -u)
  [ -n "$cross" ] || fail "no NCCL channel via NET/Socket: $(grep -h 'NCCL INFO Channel' "$LOGS"/rank-*.log | head -3)"
  echo "$cross" | head -4 | sed 's/^/  /'
  grep -h "NCCL INFO Channel .* via P2P\|NCCL INFO Channel .* via SHM" "$LOGS"/rank-*.log |
    sed 's/^.*NCCL INFO/  within a host: NCCL INFO/' | sort -u | head -2
  grep -qi "destroy_process_group\|process group has NOT been destroyed" "$LOGS"/rank-*.log &&
    fail "a rank warned about its process group at exit"
else
  grep -qE "^ddp +4 ranks \(gloo\)" "$LOGS/rank-0.log" || fail "the ranks did not use Gloo"
fi
[ "$(count_state "$WORK/run/journal.log" COMPLETE)" = 1 ] || fail "the trial did not complete"
kill -TERM "$head_pid"; wait "$head_pid"
wait_for 10 no_leftovers || fail "processes left running: $(pgrep -af "$WORK")"
finish
