#!/usr/bin/env bash
# Issue 50's sweep of a cross-encoder reranker in dev mode: configs/rerank_lr.yaml passes every
# check (--dry_run: hpo asks the trainer about configs/reranker_stsb.yaml, a cross-encoder with
# task.type left out); then the same sweep shrunk (4 random points and 2 grid points of 40
# steps) ranks its trials by eval/ndcg@10: every trial ends COMPLETE or PRUNED, a complete
# trial's journal value is the last eval/ndcg@10 of its metrics.jsonl, and `trainer eval
# --eval_kind reranking` and `trainer predict` work on the best trial's saved cross-encoder (its
# best eval/ndcg@10 again).
# Args: hpo binary, trainer binary.
HPO=$1 TRAINER=$2
source tests/integration/lib.sh

"$HPO" sweep configs/rerank_lr.yaml --dry_run > "$WORK/dry.txt" 2>&1 ||
  fail "configs/rerank_lr.yaml --dry_run: $(tail -5 "$WORK/dry.txt")"

cat > "$WORK/sweep.yaml" <<YAML
name: reranker-small
metric: {name: eval/ndcg@10, goal: maximize}
trainer:
  config: $PWD/configs/reranker_stsb.yaml
  overrides: {train.max_steps: 40, train.eval_every_steps: 20, output.checkpoint: false}
resources: {gpus_per_trial: 1}
parameters:
  lr: {distribution: log_uniform, min: 1.0e-4, max: 1.0e-2}
  batch_size: {values: [16, 32]}
lr_scaling: {rule: linear, base_batch: 32}
search:
  method: random_then_grid
  random: {trials: 4, seed: 0}
  grid: {top_k: 1, lr_points: 2, lr_span: 2.0, batch_neighbors: 0}
max_concurrent_trials: 2
max_failures_per_trial: 0
journal: $WORK/run/journal.log
YAML
out=$("$HPO" sweep "$WORK/sweep.yaml" 2>"$WORK/stderr.txt"); rc=$?
echo "$out" | tail -3
[ "$rc" -eq 0 ] || { fail "hpo sweep exited $rc: $(tail -5 "$WORK/stderr.txt")"; finish; }
echo "$out" | grep -qE '^best trial #[0-9]+: eval/ndcg@10=' || fail "no best trial by eval/ndcg@10"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"

J="$WORK/run/journal.log"
check_sweep_trials "$WORK/run" eval/ndcg@10 4 "eval/map" "eval/mrr@10"
grep -q "^loss     BinaryCrossEntropyLoss" "$WORK/run/logs/trial-0/rank-0.log" ||
  fail "trial 0's log does not name the loss: $(grep -m1 '^loss' "$WORK/run/logs/trial-0/rank-0.log")"

best=$(pyq "$J" "max((t for t in T if t['state']=='COMPLETE'), key=lambda t: t['value'])['number']")
M="$WORK/run/trial-$best/model"
got=$("$TRAINER" eval --model "$M" --eval_kind reranking --data data/rerank/stsb-dev.jsonl 2>"$WORK/eval.err") ||
  fail "trainer eval failed: $(cat "$WORK/eval.err")"
"$PY" - "$WORK/run/trial-$best/metrics.jsonl" "$got" <<'PY' || fail "trainer eval of the best model: $got"
import json, sys
best = max(json.loads(l)["eval/ndcg@10"] for l in open(sys.argv[1]) if "eval/ndcg@10" in l)
got = json.loads(sys.argv[2])["eval/ndcg@10"]
print(f"best trial's saved cross-encoder: eval/ndcg@10 {got:.6f}, its best evaluation {best:.6f}")
sys.exit(0 if abs(got - best) < 1e-6 else 1)
PY
n=$(head -5 data/stsbenchmark/sts-dev.csv | cut -f6,7 | "$TRAINER" predict --model "$M" 2>"$WORK/p.err" | grep -c '^{"score": ')
[ "$n" -eq 5 ] || fail "trainer predict on the best model: $n scores: $(cat "$WORK/p.err")"
finish
