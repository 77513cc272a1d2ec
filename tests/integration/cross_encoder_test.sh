#!/usr/bin/env bash
# Cross-encoders end to end on the CPU (issue 50): `trainer train` of configs/reranker_stsb.yaml
# (model.kind: cross_encoder, task.loss bce, task.type left out, reranking evaluation), shrunk
# to 40 steps, then:
#   - OUTPUT_DIR/model is transformers' BertForSequenceClassification layout: config.json's
#     architectures, id2label / label2id for one label and CrossEncoder's activation_fn; the
#     weights bert.* plus classifier.weight [1, 128] and classifier.bias [1]; no
#     sentence-transformers module files;
#   - `trainer eval --eval_kind reranking` of it gives the run's best eval/ndcg@10 (and map, mrr@10);
#   - `trainer predict` scores 32 STS-B dev pairs in (0, 1), the same one pair a batch
#     (padding changes nothing) within 1e-6;
#   - training on from the saved folder reads its head (its first evaluation before any step
#     equals the folder's own);
#   - bad input: a folder without a head, a line without a tab, each one line naming it.
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh

run="$WORK/run"
"$TRAINER" train --config configs/reranker_stsb.yaml train.max_steps=40 train.eval_every_steps=20 \
  "output.dir=$run" > "$WORK/train.log" 2>&1 || { fail "train failed: $(tail -5 "$WORK/train.log")"; finish; }
grep -q "^task     cross_encoder on data/stsbenchmark/sts-train.csv" "$WORK/train.log" ||
  fail "the task was not inferred as cross_encoder: $(grep -m1 '^task' "$WORK/train.log")"
grep -q "^loss     BinaryCrossEntropyLoss" "$WORK/train.log" || fail "the loss is not bce"
M="$run/model"
"$PY" - "$M" <<'PY' || fail "the saved model is not a BertForSequenceClassification folder"
import json, os, struct, sys
d = sys.argv[1]
c = json.load(open(os.path.join(d, "config.json")))
assert c["architectures"] == ["BertForSequenceClassification"], c["architectures"]
assert c["id2label"] == {"0": "LABEL_0"} and c["label2id"] == {"LABEL_0": 0}, c
assert c["sentence_transformers"]["activation_fn"] == "torch.nn.modules.activation.Sigmoid", c
f = open(os.path.join(d, "model.safetensors"), "rb")
header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
names = sorted(k for k in header if k != "__metadata__")
assert header["classifier.weight"]["shape"] == [1, 128] and header["classifier.bias"]["shape"] == [1]
assert all(n.startswith("bert.") or n.startswith("classifier.") for n in names), names
assert "bert.pooler.dense.weight" in names
for extra in ("modules.json", "1_Pooling", "head.safetensors"):
    assert not os.path.exists(os.path.join(d, extra)), extra
print("saved:", len(names), "tensors,", c["architectures"][0])
PY

got=$("$TRAINER" eval --model "$M" --eval_kind reranking --data data/rerank/stsb-dev.jsonl 2>"$WORK/eval.err") ||
  fail "trainer eval --eval_kind reranking failed: $(cat "$WORK/eval.err")"
"$PY" - "$run/metrics.jsonl" "$got" <<'PY' || fail "trainer eval of the saved model: $got"
import json, sys
evals = [json.loads(l) for l in open(sys.argv[1]) if "eval/ndcg@10" in l]
best = max(evals, key=lambda e: e["eval/ndcg@10"])
got = json.loads(sys.argv[2])
assert got["queries"] == 100, got
for key in ("eval/map", "eval/mrr@10", "eval/ndcg@10"):
    assert abs(got[key] - best[key]) < 1e-6, (key, got[key], best[key])
print("saved model: eval/ndcg@10 %.6f, the run's best %.6f" % (got["eval/ndcg@10"], best["eval/ndcg@10"]))
PY

head -32 data/stsbenchmark/sts-dev.csv | cut -f6,7 > "$WORK/pairs.tsv"
"$TRAINER" predict --model "$M" < "$WORK/pairs.tsv" > "$WORK/p32.jsonl" 2>"$WORK/p.err" ||
  fail "predict failed: $(cat "$WORK/p.err")"
"$TRAINER" predict --model "$M" --batch_size 1 < "$WORK/pairs.tsv" > "$WORK/p1.jsonl" 2>>"$WORK/p.err" ||
  fail "predict --batch_size 1 failed: $(cat "$WORK/p.err")"
"$PY" - "$WORK/p32.jsonl" "$WORK/p1.jsonl" <<'PY' || fail "predict's scores"
import json, sys
a = [json.loads(l)["score"] for l in open(sys.argv[1])]
b = [json.loads(l)["score"] for l in open(sys.argv[2])]
assert len(a) == 32 and len(b) == 32, (len(a), len(b))
assert all(0 < x < 1 for x in a), a
d = max(abs(x - y) for x, y in zip(a, b))
assert d < 1e-6, d
print("predict: 32 scores in (0, 1), batch 32 vs 1: max |diff| %.2g" % d)
PY

# Training on from the saved cross-encoder: its head is read, not made anew.
"$TRAINER" train --config configs/reranker_stsb.yaml "model.path=$M" train.max_steps=1 \
  train.eval_every_steps=1 train.lr=1e-12 "output.dir=$WORK/again" > "$WORK/again.log" 2>&1 ||
  fail "training from the saved cross-encoder failed: $(tail -5 "$WORK/again.log")"
grep -q "newly initialized" "$WORK/again.log" && fail "the saved head was not read: $(grep -m1 newly "$WORK/again.log")"
"$PY" - "$WORK/again/metrics.jsonl" "$got" <<'PY' || fail "training on from the saved head"
import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if "eval/ndcg@10" in l][0]
want = json.loads(sys.argv[2])["eval/ndcg@10"]
assert abs(e["eval/ndcg@10"] - want) < 1e-4, (e["eval/ndcg@10"], want)
PY

out=$("$TRAINER" predict --model data/bert-tiny-random < "$WORK/pairs.tsv" 2>&1); rc=$?
[ "$rc" -eq 2 ] && [[ "$out" == *"data/bert-tiny-random: not a cross-encoder"* ]] ||
  fail "predict on an encoder folder: rc $rc, $out"
out=$(printf 'a\tb\nno tab here\n' | "$TRAINER" predict --model "$M" 2>&1); rc=$?
[ "$rc" -eq 2 ] && [[ "$out" == *"stdin:2: expected two texts separated by one tab, got 1 field(s)"* ]] ||
  fail "predict on a line without a tab: rc $rc, $out"
out=$("$TRAINER" eval --model "$M" --eval_kind reranking --data data/stsbenchmark/sts-dev.csv 2>&1); rc=$?
[ "$rc" -eq 2 ] && [[ "$out" == *"sts-dev.csv:1: not a JSON object"* ]] ||
  fail "eval --eval_kind reranking on a CSV: rc $rc, $out"
finish
