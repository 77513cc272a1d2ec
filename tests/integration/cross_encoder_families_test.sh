#!/usr/bin/env bash
# Cross-encoders of every model family beyond BERT (issue 50, point 1), on the golden folders of
# data/golden/families (RoBERTa under a BertTokenizer, XLM-R, MPNet, DistilBERT): for each,
# `trainer train` of 2 steps of task.loss bce with model.kind: cross_encoder (a new head), saved
# as the last model, then:
#   - OUTPUT_DIR/model is the family's *ForSequenceClassification layout: config.json's
#     architectures, id2label / label2id and CrossEncoder's activation_fn; the encoder's tensors
#     under the class's base_model_prefix (no pooler but BERT's) and exactly the head's tensors
#     with their shapes (RoBERTa/XLM-R/MPNet: classifier.dense + classifier.out_proj; DistilBERT:
#     pre_classifier + classifier); no sentence-transformers module files;
#   - `trainer eval --eval_kind reranking` of the saved folder gives the run's last evaluation
#     (the training's own scores of the same pairs) within 1e-6;
#   - `trainer predict` scores 24 pairs in (0, 1), batch 24 and batch 1 within 1e-6;
#   - training on from the saved folder reads its head (nothing newly initialized; its first
#     evaluation equals the saved folder's).
# tests/gpu/cross_encoder_families_check.py compares the same folders with transformers.
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh

head -20 data/rerank/stsb-dev.jsonl > "$WORK/rerank20.jsonl"
head -24 data/stsbenchmark/sts-dev.csv | cut -f6,7 > "$WORK/pairs.tsv"

for name in roberta-klue xlm-r mpnet distilbert; do
  dir=data/golden/families/$name
  run="$WORK/$name-run"
  "$TRAINER" train --config configs/reranker_stsb.yaml "model.path=$dir" train.max_steps=2 \
    train.eval_every_steps=2 train.batch_size=8 "task.eval=$WORK/rerank20.jsonl" \
    "output.dir=$run" output.save=last output.checkpoint=false > "$WORK/$name.train.log" 2>&1 ||
    { fail "$name: train failed: $(tail -5 "$WORK/$name.train.log")"; continue; }
  M="$run/model"
  "$PY" - "$M" "$name" <<'PY' || fail "$name: the saved model is not its family's *ForSequenceClassification folder"
import json, os, struct, sys
d, name = sys.argv[1:3]
arch, prefix, head = {
    "roberta-klue": ("RobertaForSequenceClassification", "roberta.", "dense"),
    "xlm-r": ("XLMRobertaForSequenceClassification", "roberta.", "dense"),
    "mpnet": ("MPNetForSequenceClassification", "mpnet.", "dense"),
    "distilbert": ("DistilBertForSequenceClassification", "distilbert.", "pre"),
}[name]
c = json.load(open(os.path.join(d, "config.json")))
h = c.get("hidden_size", c.get("dim"))
assert c["architectures"] == [arch], c["architectures"]
assert c["id2label"] == {"0": "LABEL_0"} and c["label2id"] == {"LABEL_0": 0}, c
assert c["sentence_transformers"]["activation_fn"] == "torch.nn.modules.activation.Sigmoid", c
f = open(os.path.join(d, "model.safetensors"), "rb")
header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
shapes = {k: v["shape"] for k, v in header.items() if k != "__metadata__"}
if head == "dense":
    want = {"classifier.dense.weight": [h, h], "classifier.dense.bias": [h],
            "classifier.out_proj.weight": [1, h], "classifier.out_proj.bias": [1]}
else:
    want = {"pre_classifier.weight": [h, h], "pre_classifier.bias": [h],
            "classifier.weight": [1, h], "classifier.bias": [1]}
got = {k: v for k, v in shapes.items() if not k.startswith(prefix)}
assert got == want, (got, want)
encoder = [k for k in shapes if k.startswith(prefix)]
assert len(encoder) > 10 and not any(".pooler." in k for k in encoder), encoder
for extra in ("modules.json", "1_Pooling", "head.safetensors"):
    assert not os.path.exists(os.path.join(d, extra)), extra
print(f"{name}: saved {len(shapes)} tensors, {arch}, head {sorted(want)}")
PY

  got=$("$TRAINER" eval --model "$M" --eval_kind reranking --data "$WORK/rerank20.jsonl" 2>"$WORK/$name.eval.err") ||
    { fail "$name: trainer eval --eval_kind reranking failed: $(cat "$WORK/$name.eval.err")"; continue; }
  "$PY" - "$run/metrics.jsonl" "$got" "$name" <<'PY' || fail "$name: trainer eval of the saved model: $got"
import json, sys
evals = [json.loads(l) for l in open(sys.argv[1]) if "eval/ndcg@10" in l]
last = evals[-1]
got = json.loads(sys.argv[2])
assert got["queries"] == 20, got
for key in ("eval/map", "eval/mrr@10", "eval/ndcg@10"):
    assert abs(got[key] - last[key]) < 1e-6, (key, got[key], last[key])
print("%s: saved model's eval/ndcg@10 %.6f, the run's last %.6f" % (sys.argv[3], got["eval/ndcg@10"], last["eval/ndcg@10"]))
PY

  "$TRAINER" predict --model "$M" < "$WORK/pairs.tsv" > "$WORK/$name.p24.jsonl" 2>"$WORK/$name.p.err" ||
    { fail "$name: predict failed: $(cat "$WORK/$name.p.err")"; continue; }
  "$TRAINER" predict --model "$M" --batch_size 1 < "$WORK/pairs.tsv" > "$WORK/$name.p1.jsonl" 2>>"$WORK/$name.p.err" ||
    { fail "$name: predict --batch_size 1 failed: $(cat "$WORK/$name.p.err")"; continue; }
  grep -q "newly initialized\|not used when initializing" "$WORK/$name.p.err" &&
    fail "$name: predict warned about keys: $(grep -m1 "initializ" "$WORK/$name.p.err")"
  "$PY" - "$WORK/$name.p24.jsonl" "$WORK/$name.p1.jsonl" "$name" <<'PY' || fail "$name: predict's scores"
import json, sys
a = [json.loads(l)["score"] for l in open(sys.argv[1])]
b = [json.loads(l)["score"] for l in open(sys.argv[2])]
assert len(a) == 24 and len(b) == 24, (len(a), len(b))
assert all(0 < x < 1 for x in a), a
d = max(abs(x - y) for x, y in zip(a, b))
assert d < 1e-6, d
print("%s: predict: 24 scores in (0, 1), batch 24 vs 1: max |diff| %.2g" % (sys.argv[3], d))
PY

  # Training on from the saved cross-encoder: its head is read, not made anew.
  "$TRAINER" train --config configs/reranker_stsb.yaml "model.path=$M" train.max_steps=1 \
    train.eval_every_steps=1 train.lr=1e-12 train.batch_size=8 "task.eval=$WORK/rerank20.jsonl" \
    "output.dir=$WORK/$name-again" output.save=none output.checkpoint=false > "$WORK/$name.again.log" 2>&1 ||
    { fail "$name: training from the saved cross-encoder failed: $(tail -5 "$WORK/$name.again.log")"; continue; }
  grep -q "newly initialized" "$WORK/$name.again.log" &&
    fail "$name: the saved head was not read: $(grep -m1 newly "$WORK/$name.again.log")"
  "$PY" - "$WORK/$name-again/metrics.jsonl" "$got" <<'PY' || fail "$name: training on from the saved head"
import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if "eval/ndcg@10" in l][0]
want = json.loads(sys.argv[2])["eval/ndcg@10"]
assert abs(e["eval/ndcg@10"] - want) < 1e-4, (e["eval/ndcg@10"], want)
PY
done
finish
