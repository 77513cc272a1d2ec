#!/usr/bin/env bash
# Today's retrieval recipe end to end on shipped data (issue 50; README, "The trainer"):
#   1. mine hard negatives for SICK's (query, answer) pairs with a first model (`trainer mine`);
#   2. train a cross-encoder reranker on the mined triplets (configs/recipe/reranker.yaml);
#   3. score (query, answer) and (query, negative) with it (`trainer predict`): the margins;
#   4. distill a bi-encoder from the margins (MarginMSELoss) while training on the triplets
#      (MNRL), two datasets in one run, with "query: " / "passage: " prompts
#      (configs/recipe/distill.yaml);
#   5. its retrieval metrics on STS-B dev (`trainer eval --eval_kind retrieval`).
# Usage: scripts/retrieval_recipe.sh [DIR]   (default runs/recipe; run from the repository root)
# Environment: TRAINER (default: trainer on PATH, else bazel-bin/trainer/trainer), MODEL (the
# first model, default data/bert-tiny-random), and KEY=VALUE overrides for both trainings in
# TRAIN_OVERRIDES (e.g. "train.precision=bf16"). Each step prints one line; logs in DIR.
set -euo pipefail
DIR=${1:-runs/recipe}
T=${TRAINER:-$(command -v trainer || echo bazel-bin/trainer/trainer)}
MODEL=${MODEL:-data/bert-tiny-random}
read -r -a EXTRA <<< "${TRAIN_OVERRIDES:-}"
PY=${PYTHON:-python3}
mkdir -p "$DIR"

"$PY" - "$DIR/pairs.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for line in open("data/sick-triplets/train.jsonl", encoding="utf-8"):
        o = json.loads(line)
        out.write(json.dumps({"query": o["anchor"], "answer": o["positive"]}, ensure_ascii=False) + "\n")
PY
"$T" mine --model "$MODEL" --data "$DIR/pairs.jsonl" --output "$DIR/mined.jsonl" \
  --num_negatives 1 --range_min 2 > "$DIR/mine.log" 2>&1
echo "1. mine:     $(tail -1 "$DIR/mine.log")"

"$T" train --config configs/recipe/reranker.yaml task.train="$DIR/mined.jsonl" \
  output.dir="$DIR/reranker" "${EXTRA[@]}" > "$DIR/reranker.log" 2>&1
echo "2. reranker: $(grep -E '^done' "$DIR/reranker.log")"

"$PY" - "$DIR" <<'PY'
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(f"{d}/mined.jsonl", encoding="utf-8")]
clean = lambda s: " ".join(s.split())  # one pair a line: no tabs or newlines inside
with open(f"{d}/positive.tsv", "w") as p, open(f"{d}/negative.tsv", "w") as n:
    for r in rows:
        p.write(f"{clean(r['query'])}\t{clean(r['answer'])}\n")
        n.write(f"{clean(r['query'])}\t{clean(r['negative'])}\n")
PY
for side in positive negative; do
  "$T" predict --model "$DIR/reranker/model" < "$DIR/$side.tsv" > "$DIR/$side.scores" 2>> "$DIR/predict.log"
done
"$PY" - "$DIR" <<'PY'
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(f"{d}/mined.jsonl", encoding="utf-8")]
pos = [json.loads(l)["score"] for l in open(f"{d}/positive.scores")]
neg = [json.loads(l)["score"] for l in open(f"{d}/negative.scores")]
assert len(rows) == len(pos) == len(neg), (len(rows), len(pos), len(neg))
with open(f"{d}/margins.jsonl", "w", encoding="utf-8") as out:
    for r, p, n in zip(rows, pos, neg):
        out.write(json.dumps({"query": r["query"], "answer": r["answer"], "negative": r["negative"],
                              "label": p - n}, ensure_ascii=False) + "\n")
print(f"3. margins:  {len(rows)} rows, mean margin {sum(pos) / len(pos) - sum(neg) / len(neg):.4f}")
PY

"$T" train --config configs/recipe/distill.yaml task.datasets.margins.train="$DIR/margins.jsonl" \
  task.datasets.triplets.train="$DIR/mined.jsonl" output.dir="$DIR/bi-encoder" "${EXTRA[@]}" \
  > "$DIR/distill.log" 2>&1
echo "4. distill:  $(grep -E '^done' "$DIR/distill.log")"

"$T" eval --model "$DIR/bi-encoder/model" --eval_kind retrieval \
  --queries data/retrieval/stsb-dev/queries.jsonl --corpus data/retrieval/stsb-dev/corpus.jsonl \
  --qrels data/retrieval/stsb-dev/qrels.tsv > "$DIR/retrieval.json" 2> "$DIR/eval.log"
echo "5. retrieval: $(cat "$DIR/retrieval.json")"
