#!/usr/bin/env bash
# Issue 50, acceptance 3: scripts/retrieval_recipe.sh, the README's retrieval recipe, end to end
# on shipped data with the trainer under test: each of its five steps prints its line, the mined
# rows are triplets, the margins file holds a label per row, the distilled run trained on both
# datasets (its step lines name them), and the final line is the bi-encoder's retrieval metrics.
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh

TRAINER="$TRAINER" PYTHON="$PY" scripts/retrieval_recipe.sh "$WORK/recipe" > "$WORK/recipe.out" 2>&1 ||
  fail "the recipe failed: $(tail -5 "$WORK/recipe.out"; tail -n 3 "$WORK"/recipe/*.log)"
cat "$WORK/recipe.out"
for n in 1 2 3 4 5; do
  grep -q "^$n\. " "$WORK/recipe.out" || fail "step $n printed nothing"
done
"$PY" - "$WORK/recipe" <<'PY' || fail "the recipe's files are not what each step should leave (above)"
import json, sys
d = sys.argv[1]
mined = [json.loads(l) for l in open(f"{d}/mined.jsonl")]
margins = [json.loads(l) for l in open(f"{d}/margins.jsonl")]
ok = len(mined) > 300 and all(set(r) == {"query", "answer", "negative"} for r in mined)
ok &= len(margins) == len(mined) and all(isinstance(r["label"], float) for r in margins)
ir = json.loads(open(f"{d}/retrieval.json").read().splitlines()[-1])
ok &= 0 < ir["eval/ndcg@10"] <= 1 and "eval/mrr@10" in ir
print(f"mined {len(mined)}, margins {len(margins)}, ndcg@10 {ir['eval/ndcg@10']:.4f}")
sys.exit(0 if ok else 1)
PY
grep -q "margins" "$WORK/recipe/distill.log" && grep -q "triplets" "$WORK/recipe/distill.log" ||
  fail "the distilled run's log names not both datasets"
finish
