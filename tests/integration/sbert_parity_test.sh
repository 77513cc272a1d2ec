#!/usr/bin/env bash
# Issue 35, acceptance 1 and 2: `trainer train` logs at step 1 (its loss on the first batch, model
# in fp32 with dropout 0, shuffling off) the value sentence-transformers 6.0.1 computes for the
# same rows, and the encoder's gradient norm, within 1e-4 relative, for every case of
# data/golden/sbert_goldens.json: cosine, cosent, angle, mnrl on pairs and on triplets,
# cached_mnrl, MatryoshkaLoss around mnrl, cached_mnrl and cosent; issue 50: symmetric_mnrl, triplet,
# margin_mse (rows with a margin), mse (rows with an embedding), gist, cached_gist, mnrl with
# prompts (pooled with and without them). Then a run evaluated by
# retrieval on data/retrieval/stsb-dev (task.eval_queries, eval_corpus, eval_qrels) logs
# InformationRetrievalEvaluator's metrics for the model as loaded, to 1e-6: it evaluates after one
# step at lr 1e-30, which leaves the float32 weights as they were.
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh
G=data/golden/sbert_goldens.json

for name in $("$PY" -c "import json; print(' '.join(json.load(open('$G'))['losses']))"); do
  args=$("$PY" - "$G" "$name" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["losses"][sys.argv[2]]
kv = [f"task.type={c['type']}", f"task.loss={c['loss']}", f"task.train={c['data']}",
      f"task.format={c['format']}", f"train.batch_size={c['batch_size']}"]
for key in ("columns", "cached_mini_batch", "matryoshka_dims", "matryoshka_weights",
            "guide_model", "label_column"):
    if key in c:
        v = c[key]
        kv.append(f"task.{key}=[{','.join(map(str, v))}]" if isinstance(v, list) else f"task.{key}={v}")
if "prompts" in c:  # a string or a map, as JSON; spaces escaped (the args split on blanks)
    kv.append("task.prompts=" + json.dumps(c["prompts"], separators=(",", ":")).replace(" ", "\\u0020"))
if "include_prompt" in c:
    kv.append(f"model.include_prompt={str(c['include_prompt']).lower()}")
print(" ".join(kv))
PY
)
  # shellcheck disable=SC2086
  write_train_yaml "$WORK/$name.yaml" $args task.eval= train.max_steps=1 train.shuffle=false \
    train.batch_sampler=default train.log_every_steps=1 train.lr=1e-30 train.warmup_ratio=0 \
    output.dir="$WORK/$name"
  "$TRAINER" train --config "$WORK/$name.yaml" > "$WORK/$name.log" 2>&1 ||
    { fail "$name: train failed: $(tail -3 "$WORK/$name.log")"; continue; }
  "$PY" - "$G" "$name" "$WORK/$name/metrics.jsonl" <<'PY' || fail "$name: differs from sentence-transformers (above)"
import json, sys
want = json.load(open(sys.argv[1]))["losses"][sys.argv[2]]
step = [json.loads(l) for l in open(sys.argv[3]) if '"train/loss"' in l][0]
rel = lambda a, b: abs(a - b) / abs(b)
e_loss, e_norm = rel(step["train/loss"], want["value"]), rel(step["train/grad_norm"], want["grad_norm"])
print(f"{sys.argv[2]}: loss {step['train/loss']:.7g} (sentence-transformers {want['value']:.7g}, "
      f"rel {e_loss:.1e}); grad norm {step['train/grad_norm']:.7g} ({want['grad_norm']:.7g}, rel {e_norm:.1e})")
sys.exit(0 if step["step"] == 1 and e_loss <= 1e-4 and e_norm <= 1e-4 else 1)
PY
done

# A Matryoshka dim wider than the embeddings is refused at set-up, naming the key and the width.
write_train_yaml "$WORK/wide.yaml" task.matryoshka_dims=[256,64] train.max_steps=1 output.dir="$WORK/wide"
"$TRAINER" train --config "$WORK/wide.yaml" > "$WORK/wide.log" 2>&1 && fail "a dim of 256 on a 128-wide model trained"
grep -q "task.matryoshka_dims: 256 is larger than the embeddings of data/bert-tiny-random (hidden size 128)" \
  "$WORK/wide.log" || fail "wide dim: $(tail -1 "$WORK/wide.log")"

# Retrieval: the model as loaded (lr 1e-30), evaluated at the end of its one step.
write_train_yaml "$WORK/ir.yaml" task.eval= task.eval_queries=data/retrieval/stsb-dev/queries.jsonl \
  task.eval_corpus=data/retrieval/stsb-dev/corpus.jsonl task.eval_qrels=data/retrieval/stsb-dev/qrels.tsv \
  train.max_steps=1 train.lr=1e-30 train.warmup_ratio=0 train.batch_size=16 output.dir="$WORK/ir"
"$TRAINER" train --config "$WORK/ir.yaml" > "$WORK/ir.log" 2>&1 ||
  fail "retrieval: train failed: $(tail -3 "$WORK/ir.log")"
"$PY" - "$G" "$WORK/ir/metrics.jsonl" <<'PY' || fail "retrieval metrics differ from InformationRetrievalEvaluator (above)"
import json, sys
want = json.load(open(sys.argv[1]))["retrieval"]["metrics"]
got = [json.loads(l) for l in open(sys.argv[2]) if '"eval/ndcg@10"' in l][-1]
worst = max(abs(got[k] - v) for k, v in want.items())
print(f"retrieval: {len(want)} metrics, max abs difference {worst:.1e}; "
      f"ndcg@10 {got['eval/ndcg@10']:.6f} mrr@10 {got['eval/mrr@10']:.6f} map@100 {got['eval/map@100']:.6f}")
sys.exit(0 if worst <= 1e-6 else 1)
PY
finish
