#!/usr/bin/env bash
# Data parallelism across hosts: two network namespaces made here (tests/integration/netns_lib.sh),
# one trainer rank in each, Gloo between their addresses (the only path between them):
# 2 ranks x batch 8 reproduce 1 process x batch 16 within 1e-5 (losses, gradient norms,
# evaluations, final weights). Needs root (CI runs as root).
# Args: trainer binary, compare_runs.py.
TRAINER=$1 COMPARE=$2
source tests/integration/lib.sh
source tests/integration/netns_lib.sh
make_cluster 2
A=${NS_HOSTS[0]} B=${NS_HOSTS[1]}
echo "hosts: $A ($NET.2), $B ($NET.3), joined through a bridge"

write_ddp_train_yaml "$WORK/base.yaml"
"$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/one" > "$WORK/one.log" 2>&1 ||
  fail "one process: $(tail -2 "$WORK/one.log")"

export MASTER_ADDR=$NET.2 MASTER_PORT=29533 WORLD_SIZE=2
ip netns exec "$B" env RANK=1 LOCAL_RANK=0 "$TRAINER" train --config "$WORK/base.yaml" \
  output.dir="$WORK/two-b" train.batch_size=8 > "$WORK/b.log" 2>&1 &
pb=$!
ip netns exec "$A" env RANK=0 LOCAL_RANK=0 "$TRAINER" train --config "$WORK/base.yaml" \
  output.dir="$WORK/two" train.batch_size=8 > "$WORK/a.log" 2>&1; ra=$?
rb=0; wait $pb || rb=$?
[ "$ra" -eq 0 ] && [ "$rb" -eq 0 ] || fail "ranks exited $ra / $rb: $(tail -2 "$WORK/a.log") | $(tail -2 "$WORK/b.log")"
grep "^ddp " "$WORK/a.log"
"$PY" "$COMPARE" "$WORK/one" "$WORK/two" 1e-5 || fail "2 hosts differ from 1 process"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
