#!/usr/bin/env bash
# Issue 50 point 6: triplet evaluation (task.eval_kind triplet, `trainer eval --eval_kind
# triplet`) against sentence-transformers' TripletEvaluator:
#   - `trainer eval --eval_kind triplet` of data/bert-tiny-random (mean pooling, fp32, 128 tokens)
#     on data/sick-triplets/train.jsonl prints the accuracy of data/golden/sbert_goldens.json's
#     "triplet_eval" case to 1e-6, and its row count;
#   - a run with task.eval_kind triplet logs the same eval/accuracy for the model as loaded
#     (one step at lr 1e-30, which leaves the float32 weights as they were);
#   - bad input: a row without a negative (one line naming the file and row), a fixed format,
#     a type that cannot take it.
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh
G=data/golden/sbert_goldens.json
DATA=data/sick-triplets/train.jsonl

# The golden's accuracy, and its data and row count as this test reads them.
want=$("$PY" -c "import json; c = json.load(open('$G'))['triplet_eval']; print(c['metrics']['eval/accuracy'])") ||
  fail "$G has no triplet_eval case"
"$PY" -c "import json, sys; c = json.load(open('$G'))['triplet_eval']; sys.exit(c['data'] != '$DATA' or c['rows'] != 383)" ||
  fail "$G: triplet_eval is not 383 rows of $DATA"

# trainer eval, outside training.
"$TRAINER" eval --model data/bert-tiny-random --eval_kind triplet --data "$DATA" --pooling mean \
  --max_len 128 --device cpu > "$WORK/eval.json" 2> "$WORK/eval.err" ||
  fail "trainer eval --eval_kind triplet failed: $(tail -3 "$WORK/eval.err")"
"$PY" - "$WORK/eval.json" "$want" <<'PY' || fail "trainer eval's triplet accuracy differs from TripletEvaluator (above)"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
got, want = json.loads(lines[0]), float(sys.argv[2])
print(f"trainer eval: {lines[0]}; TripletEvaluator {want:.7f}")
sys.exit(0 if len(lines) == 1 and got["examples"] == 383 and abs(got["eval/accuracy"] - want) <= 1e-6
         else 1)
PY

# A run evaluated by triplets: the model as loaded (lr 1e-30), evaluated at the end of its step.
write_train_yaml "$WORK/run.yaml" task.type=mnrl task.train="$DATA" task.eval="$DATA" \
  task.format=jsonl task.eval_kind=triplet train.max_steps=1 train.lr=1e-30 train.warmup_ratio=0 \
  train.batch_size=16 output.dir="$WORK/run"
"$TRAINER" train --config "$WORK/run.yaml" > "$WORK/run.log" 2>&1 ||
  fail "train with task.eval_kind triplet failed: $(tail -3 "$WORK/run.log")"
grep -q " by triplet" "$WORK/run.log" || fail "the run does not say it evaluates by triplet"
"$PY" - "$WORK/run/metrics.jsonl" "$want" <<'PY' || fail "the run's triplet accuracy differs from TripletEvaluator (above)"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1]) if '"eval/accuracy"' in l][-1]
print(f"train: eval/accuracy {got['eval/accuracy']:.7f} at step {got['step']}")
sys.exit(0 if abs(got["eval/accuracy"] - float(sys.argv[2])) <= 1e-6 else 1)
PY

# Bad input, each one line naming what is wrong.
head -3 "$DATA" | "$PY" -c "
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    print(json.dumps({'anchor': o['anchor'], 'positive': o['positive']}))" > "$WORK/pairs.jsonl"
"$TRAINER" eval --model data/bert-tiny-random --eval_kind triplet --data "$WORK/pairs.jsonl" \
  > /dev/null 2> "$WORK/pairs.err"
rc=$?
[ "$rc" = 2 ] || fail "a pair file: exit $rc, not 2"
grep -q "pairs.jsonl: row 1 has 2 text columns; triplet evaluation takes 3 (anchor, positive, negative)" \
  "$WORK/pairs.err" || fail "a pair file: $(cat "$WORK/pairs.err")"

write_train_yaml "$WORK/stsb.yaml" task.eval_kind=triplet train.max_steps=1 output.dir="$WORK/stsb"
"$TRAINER" train --config "$WORK/stsb.yaml" > "$WORK/stsb.log" 2>&1 && fail "triplet on stsb trained"
grep -q "task.eval_kind: only applies to task.format jsonl, csv or tsv (not stsb)" \
  "$WORK/stsb.log" || fail "triplet on stsb: $(tail -1 "$WORK/stsb.log")"

write_train_yaml "$WORK/ce.yaml" model.kind=cross_encoder task.type=cross_encoder task.format=jsonl \
  task.train="$DATA" task.eval="$DATA" task.eval_kind=triplet train.max_steps=1 output.dir="$WORK/ce"
"$TRAINER" train --config "$WORK/ce.yaml" > "$WORK/ce.log" 2>&1 && fail "a cross-encoder took triplet"
grep -q "triplet does not fit task type cross_encoder" "$WORK/ce.log" ||
  fail "triplet on cross_encoder: $(tail -1 "$WORK/ce.log")"
finish
