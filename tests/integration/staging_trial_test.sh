#!/usr/bin/env bash
# Staging over UCX through the trial flow (issue 6, acceptance 5): a head and one agent host in
# two network namespaces; a sweep of 2 trials whose training set is a 50 MB file named in
# `resources.stage`. The head hashes it and serves it (UCX bulk server on its address); the
# agent fetches it into its cache for trial 0 (verified by SHA-256) and reuses it for trial 1;
# the trainer is pointed at the cached copy (task.train=CACHE/HASH); both trials complete.
# The agent host also gets its own mount namespace with an empty tmpfs over the sweep's run
# folder, so the trials' output folders (metrics, saved model) exist only on its side until the
# head fetches them back (resources.fetch_back) into the same paths on its own side.
# Args: head, hpo binaries.
HEAD=$1 HPO=$2
source tests/integration/lib.sh
source tests/integration/netns_lib.sh
make_cluster 1 1
H=$NS_HEAD A=${NS_HOSTS[0]}
"$PY" -c "
d = open('data/stsbenchmark/sts-train.csv').read()
open('$WORK/big-train.csv', 'w').write(d * (50 * 1000 * 1000 // len(d) + 1))"
SUM=$(sha256sum "$WORK/big-train.csv" | cut -d' ' -f1)
echo "dataset: $(stat -c %s "$WORK/big-train.csv") bytes, sha256 ${SUM:0:16}..."
mkdir -p "$WORK/run"
REMOTE_SHELL="ip netns exec {host} unshare --mount --propagation private sh -c 'mount -t tmpfs tf-run $WORK/run && exec \"\$0\" \"\$@\"'"
start_head "$WORK/head.log" "tcp://$NET.1:5555" --heartbeat_ms 1000
wait_hosts_up "$WORK/head.log" "all 1" agent
write_train_yaml "$WORK/train.yaml" model.max_seq_len=64 train.max_steps=10 train.batch_size=8 \
  train.eval_every_steps=10 train.log_every_steps=5 output.save=best
write_sweep_yaml "$WORK/sweep.yaml" name=staging \
  trainer="{config: $WORK/train.yaml, overrides: {task.train: $WORK/big-train.csv}}" \
  resources="{gpus_per_trial: 1, stage: [$WORK/big-train.csv], fetch_back: true}" \
  parameters.lr='{values: [1.0e-4, 2.0e-4]}' parameters.batch_size='{values: [8]}' \
  search='{method: grid}' max_failures_per_trial=0
ip netns exec "$H" "$HPO" sweep "$WORK/sweep.yaml" --head "tcp://$NET.1:5555" > "$WORK/hpo.log" 2>&1
rc=$?
tail -3 "$WORK/hpo.log"
[ "$rc" -eq 0 ] || fail "hpo sweep exited $rc"
AL=$RUNTIME/agent-$A/agent.log
grep -E "staging server|staging $WORK" "$WORK/head.log" | cut -d']' -f2- | sed "s|$WORK/||g; s/^/  head:/"
grep -E "staged|staged copies" "$AL" | cut -d']' -f2- | sed "s|$WORK/||g; s/^/  agent:/"
[ "$(grep -c "staging $WORK/big-train.csv as ${SUM:0:12}" "$WORK/head.log")" -eq 1 ] ||
  fail "the head did not hash the dataset once as ${SUM:0:12}"
grep -q "staged $WORK/big-train.csv (${SUM:0:12}) fetched from $NET.1:[0-9]*: $(stat -c %s "$WORK/big-train.csv") bytes" "$AL" ||
  fail "trial 0 did not fetch the whole dataset from the head"
[ "$(grep -c "staged $WORK/big-train.csv (${SUM:0:12}) reused from the cache" "$AL")" -eq 1 ] ||
  fail "trial 1 did not reuse the cached copy"
CACHED=$RUNTIME/agent-$A/cache/$SUM
[ "$(sha256sum "$CACHED" 2>/dev/null | cut -d' ' -f1)" = "$SUM" ] || fail "the cached copy's sha256 differs"
[ "$(grep -c "the ranks read the staged copies: task.train=$CACHED" "$AL")" -eq 2 ] ||
  fail "the trainers were not pointed at the cached copy"
grep -E "fetched back|not fetched back|$WORK/run/trial-[01]: " "$WORK/head.log" | cut -d']' -f2- | sed "s|$WORK/||g; s/^/  head:/"
for t in 0 1; do
  [ -s "$WORK/run/trial-$t/metrics.jsonl" ] && [ -s "$WORK/run/trial-$t/model/config.json" ] ||
    fail "trial $t's output folder was not fetched back: $(ls -R "$WORK/run/trial-$t" 2>&1 | head -5)"
  grep -q "run [0-9]*: $WORK/run/trial-$t: fetched [0-9]* bytes from $NET.2:[0-9]* in" "$WORK/head.log" ||
    fail "the head did not fetch trial $t's output over UCX"
done
expect_states "$WORK/run/journal.log" "['COMPLETE', 'COMPLETE']"
stop_head
wait_for 10 agents_gone "$A" || fail "the agent is left"
finish
