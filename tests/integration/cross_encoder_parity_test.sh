#!/usr/bin/env bash
# Issue 50, acceptance 1 (cross-encoders): against data/golden/cross_encoder_goldens.json, made by
# sentence-transformers 6.0.1 on the GPU host (fp32, dropout 0) from data/bert-tiny-random with
# the heads data/golden/cross_encoder_head{,3}.safetensors:
#   - `trainer predict` on the first 32 STS-B dev pairs: sigmoid scores (one label) and raw
#     logits (three labels) within 1e-5 of CrossEncoder.predict;
#   - `trainer train` at step 1 (fp32, dropout 0, file order, lr 1e-30): the loss and the gradient
#     norm within 1e-4 relative for bce, ce, mnrl (num_negatives 0: every in-batch candidate),
#     lambda, listnet, margin_mse and mse, each on the rows its golden names;
#   - `trainer eval --eval_kind reranking` on data/rerank/stsb-dev.jsonl: map, mrr@10 and
#     ndcg@10 within 1e-6 of CrossEncoderRerankingEvaluator.
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh
G=data/golden/cross_encoder_goldens.json

for k in 1 3; do
  head="data/golden/cross_encoder_head.safetensors"
  [ "$k" = 3 ] && head="data/golden/cross_encoder_head3.safetensors"
  "$PY" data/golden/make_cross_encoder_folder.py data/bert-tiny-random "$head" "$WORK/ce$k" \
    > "$WORK/folder$k.log" 2>&1 || fail "make_cross_encoder_folder.py $k: $(tail -1 "$WORK/folder$k.log")"
done

# predict
head -32 data/stsbenchmark/sts-dev.csv | cut -f6,7 > "$WORK/pairs.tsv"
for k in 1 3; do
  "$TRAINER" predict --model "$WORK/ce$k" --batch_size 32 < "$WORK/pairs.tsv" \
    > "$WORK/predict$k.jsonl" 2> "$WORK/predict$k.log" ||
    { fail "predict $k: $(tail -2 "$WORK/predict$k.log")"; continue; }
  "$PY" - "$G" "$k" "$WORK/predict$k.jsonl" <<'PY' || fail "predict $k differs from CrossEncoder.predict (above)"
import json, sys
want = json.load(open(sys.argv[1]))["predict"][sys.argv[2]]["scores"]
rows = [json.loads(l) for l in open(sys.argv[3])]
got = [r["score"] if "score" in r else r["scores"] for r in rows]
flat = lambda xs: [v for x in xs for v in (x if isinstance(x, list) else [x])]
worst = max(abs(a - b) for a, b in zip(flat(got), flat(want))) if len(got) == len(want) else 1e9
print(f"predict {sys.argv[2]} label(s): {len(got)} pairs, max abs difference {worst:.1e}")
sys.exit(0 if worst <= 1e-5 else 1)
PY
done

# step-1 losses: name, model folder, then the case's keys
check_loss() {
  local name=$1 folder=$2; shift 2
  write_train_yaml "$WORK/$name.yaml" model.path="$folder" model.kind=cross_encoder task.type= \
    task.eval= "$@" train.max_steps=1 train.shuffle=false train.batch_sampler=default \
    train.log_every_steps=1 train.lr=1e-30 train.warmup_ratio=0 output.dir="$WORK/$name"
  "$TRAINER" train --config "$WORK/$name.yaml" > "$WORK/$name.log" 2>&1 ||
    { fail "$name: train failed: $(tail -3 "$WORK/$name.log")"; return; }
  "$PY" - "$G" "$name" "$WORK/$name/metrics.jsonl" <<'PY' || fail "$name: differs from sentence-transformers (above)"
import json, sys
want = json.load(open(sys.argv[1]))[sys.argv[2]]
step = [json.loads(l) for l in open(sys.argv[3]) if '"train/loss"' in l][0]
rel = lambda a, b: abs(a - b) / abs(b)
e_loss, e_norm = rel(step["train/loss"], want["value"]), rel(step["train/grad_norm"], want["grad_norm"])
print(f"{sys.argv[2]}: loss {step['train/loss']:.7g} (sentence-transformers {want['value']:.7g}, "
      f"rel {e_loss:.1e}); grad norm {step['train/grad_norm']:.7g} ({want['grad_norm']:.7g}, rel {e_norm:.1e})")
sys.exit(0 if step["step"] == 1 and e_loss <= 1e-4 and e_norm <= 1e-4 else 1)
PY
}
check_loss bce "$WORK/ce1" task.loss=bce train.batch_size=16
check_loss ce "$WORK/ce3" task.loss=ce task.train=data/sick/SICK.txt task.format=sick train.batch_size=16
check_loss mnrl "$WORK/ce1" task.loss=mnrl task.num_negatives=0 \
  task.train=data/sick-triplets/train.jsonl task.format=jsonl train.batch_size=16
for loss in lambda listnet; do
  check_loss "$loss" "$WORK/ce1" task.loss="$loss" task.train=data/golden/listwise_rows.jsonl \
    task.format=jsonl train.batch_size=8
done
check_loss margin_mse "$WORK/ce1" task.loss=margin_mse task.train=data/golden/margin_rows.jsonl \
  task.format=jsonl task.label_column=label train.batch_size=16
check_loss mse "$WORK/ce1" task.loss=mse train.batch_size=16

# reranking
"$TRAINER" eval --model "$WORK/ce1" --eval_kind reranking --data data/rerank/stsb-dev.jsonl \
  > "$WORK/rerank.json" 2> "$WORK/rerank.log" || fail "eval reranking: $(tail -2 "$WORK/rerank.log")"
"$PY" - "$G" "$WORK/rerank.json" <<'PY' || fail "reranking metrics differ from CrossEncoderRerankingEvaluator (above)"
import json, sys
want = json.load(open(sys.argv[1]))["reranking"]["metrics"]
got = json.loads(open(sys.argv[2]).read().splitlines()[-1])
worst = max(abs(got[k] - v) for k, v in want.items())
print(f"reranking: {len(want)} metrics, max abs difference {worst:.1e}: {got}")
sys.exit(0 if worst <= 1e-6 else 1)
PY
finish
