#!/usr/bin/env bash
# The README's modern Sentence-BERT recipe (issue 35, acceptance 4), end to end in dev mode:
# `hpo sweep configs/retrieval_lr.yaml` trains configs/sbert_triplets.yaml (SICK triplets from a
# JSONL, cached_mnrl in Matryoshka, no-duplicate batches, retrieval evaluation on STS-B dev)
# under the agent and ranks the trials by eval/mrr@10. Every trial ends COMPLETE or PRUNED; a
# complete trial's journal value is the last eval/mrr@10 of its metrics.jsonl; each trial's log
# names the loss and the sampler; `trainer eval --eval_kind retrieval` on the best trial's saved
# model gives its best eval/mrr@10 again.
# Args: hpo binary, trainer binary.
HPO=$1 TRAINER=$2
source tests/integration/lib.sh

out=$("$HPO" sweep configs/retrieval_lr.yaml --journal "$WORK/run/journal.log" 2>"$WORK/stderr.txt"); rc=$?
echo "$out" | tail -4
[ "$rc" -eq 0 ] || { fail "hpo sweep exited $rc: $(tail -5 "$WORK/stderr.txt")"; finish; }
echo "$out" | grep -qE '^best trial #[0-9]+: eval/mrr@10=' || fail "no best trial by eval/mrr@10"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"

J="$WORK/run/journal.log"
check_sweep_trials "$WORK/run" eval/mrr@10 4 "eval/ndcg@10" "eval/recall@1" "eval/recall@10" "eval/map@100" "eval/ndcg@10@32"
log="$WORK/run/logs/trial-0/rank-0.log"
grep -q "^loss     CachedMultipleNegativesRankingLoss .*MatryoshkaLoss over dims 128, 64, 32" "$log" ||
  fail "trial 0's log does not name the loss: $(grep -m1 '^loss' "$log")"
grep -q "^batches  no_duplicates" "$log" || fail "trial 0's log does not name the sampler"

best=$(pyq "$J" "max((t for t in T if t['state']=='COMPLETE'), key=lambda t: t['value'])['number']")
got=$("$TRAINER" eval --model "$WORK/run/trial-$best/model" --eval_kind retrieval \
      --queries data/retrieval/stsb-dev/queries.jsonl --corpus data/retrieval/stsb-dev/corpus.jsonl \
      --qrels data/retrieval/stsb-dev/qrels.tsv 2>"$WORK/eval.err") ||
  fail "trainer eval failed: $(cat "$WORK/eval.err")"
"$PY" - "$WORK/run/trial-$best/metrics.jsonl" "$got" <<'PY' || fail "trainer eval of the best model: $got"
import json, sys
best = max(json.loads(l)["eval/ndcg@10"] for l in open(sys.argv[1]) if "eval/ndcg@10" in l)
got = json.loads(sys.argv[2])["eval/ndcg@10"]
print(f"best trial's saved model: eval/ndcg@10 {got:.6f}, its best evaluation {best:.6f}")
sys.exit(0 if abs(got - best) < 1e-5 else 1)
PY
finish
