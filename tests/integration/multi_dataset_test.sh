#!/usr/bin/env bash
# Several datasets in one run (task.datasets, issue 50 point 5) on the CPU: bert-tiny-random
# trained a few steps on data/sick-triplets/train.jsonl with loss mnrl and
# data/golden/margin_rows.jsonl with loss margin_mse (label_column label, prompts on it), then:
#   - round_robin: the step lines name the datasets in turn (dataset=sick, dataset=margin, ...),
#     and metrics.jsonl has train/loss/sick and train/loss/margin on the matching steps;
#   - proportional (the default): both datasets' steps appear, every step of each once an
#     epoch (sick's 383 rows in batches of 16 = 24 steps, margin's 32 = 2: 26 an epoch);
#   - the first step of the round_robin run (sick's first batch) has the loss of step 1 of a
#     run on sick alone: the same weights, dropout and batch. Later steps differ: the model has
#     then trained on another dataset's batch.
#   - the resolved config writes task.datasets back, and re-reads it (`--dry_run --json`, whose
#     files list each dataset's train file);
#   - task.train beside task.datasets is one error line naming the file, the line and the key.
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh

cat > "$WORK/two.yaml" <<'YAML'
model: {path: data/bert-tiny-random, max_seq_len: 32}
task:
  datasets:
    sick: {train: data/sick-triplets/train.jsonl, format: jsonl, loss: mnrl}
    margin:
      train: data/golden/margin_rows.jsonl
      format: jsonl
      label_column: label
      loss: margin_mse
      prompts: {anchor: "query: ", positive: "passage: ", negative: "passage: "}
train: {batch_size: 16, log_every_steps: 1, eval_every_steps: 0, precision: fp32, lr: 1.0e-4}
output: {save: none, checkpoint: false}
YAML

"$TRAINER" train --config "$WORK/two.yaml" train.max_steps=6 train.multi_dataset_sampler=round_robin \
  "output.dir=$WORK/rr" > "$WORK/rr.log" 2>&1 || { fail "round_robin run failed: $(tail -5 "$WORK/rr.log")"; finish; }
got=$(grep -o "dataset=[a-z]*" "$WORK/rr.log" | tr '\n' ' ')
[ "$got" = "dataset=sick dataset=margin dataset=sick dataset=margin dataset=sick dataset=margin " ] ||
  fail "round_robin's steps: $got"
grep -q "^datasets sick (mnrl, 383 examples" "$WORK/rr.log" || fail "no datasets line: $(grep -m1 '^datasets' "$WORK/rr.log")"
"$PY" - "$WORK/rr/metrics.jsonl" <<'PY' || fail "round_robin's metrics.jsonl"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if "train/loss" in r]
assert len(rows) == 6, len(rows)
for i, r in enumerate(rows):
    name = ["sick", "margin"][i % 2]
    other = ["margin", "sick"][i % 2]
    assert r["train/loss/" + name] == r["train/loss"], r
    assert "train/loss/" + other not in r, r
print("round_robin: sick, margin in turn over 6 steps")
PY

"$TRAINER" train --config "$WORK/two.yaml" train.epochs=1 "output.dir=$WORK/prop" > "$WORK/prop.log" 2>&1 ||
  fail "proportional run failed: $(tail -5 "$WORK/prop.log")"
sick=$(grep -c "dataset=sick" "$WORK/prop.log")
margin=$(grep -c "dataset=margin" "$WORK/prop.log")
[ "$sick" = 24 ] && [ "$margin" = 2 ] || fail "proportional: $sick sick and $margin margin steps (want 24 and 2)"
grep -q "^step 26/26 " "$WORK/prop.log" || fail "proportional: not 26 steps an epoch: $(grep '^step' "$WORK/prop.log" | tail -1)"

# sick alone: step 1 has the round_robin run's first loss.
cat > "$WORK/one.yaml" <<'YAML'
model: {path: data/bert-tiny-random, max_seq_len: 32}
task: {train: data/sick-triplets/train.jsonl, format: jsonl, loss: mnrl}
train: {batch_size: 16, log_every_steps: 1, eval_every_steps: 0, precision: fp32, lr: 1.0e-4}
output: {save: none, checkpoint: false}
YAML
"$TRAINER" train --config "$WORK/one.yaml" train.max_steps=2 "output.dir=$WORK/one" > "$WORK/one.log" 2>&1 ||
  fail "one-dataset run failed: $(tail -5 "$WORK/one.log")"
"$PY" - "$WORK/rr/metrics.jsonl" "$WORK/one/metrics.jsonl" <<'PY' || fail "the first step's loss differs from the one-dataset run's"
import json, sys
two = [json.loads(l) for l in open(sys.argv[1]) if "train/loss" in l]
one = [json.loads(l) for l in open(sys.argv[2]) if "train/loss" in l]
assert two[0]["train/loss/sick"] == one[0]["train/loss"], (two[0], one[0])
print("step 1: sick's loss %.6f in both runs" % one[0]["train/loss"])
PY

# The resolved config writes task.datasets back and reads again.
R="$WORK/rr/.tunefleet/config.yaml"
grep -q "^  datasets:" "$R" || fail "the resolved config has no task.datasets: $(cat "$R")"
"$TRAINER" train --config "$R" --dry_run --json > "$WORK/dry.json" 2>"$WORK/dry.err" ||
  fail "the resolved config does not read back: $(cat "$WORK/dry.err")"
"$PY" - "$WORK/dry.json" <<'PY' || fail "the dry run of the resolved config"
import json, sys
j = json.load(open(sys.argv[1]))
keys = {f["key"] for f in j["files"]}
assert {"task.datasets.sick.train", "task.datasets.margin.train"} <= keys, keys
d = j["keys"]["task.datasets"]
assert d["margin"]["loss"] == "margin_mse" and d["margin"]["label_column"] == "label", d
assert d["margin"]["prompts"]["anchor"] == "query: ", d
assert j["keys"]["train.multi_dataset_sampler"] == "round_robin", j["keys"]
assert j["train_examples"] == 383 + 32, j["train_examples"]
print("resolved config: task.datasets read back; files", sorted(keys))
PY

# task.train beside task.datasets: one line naming the file, the line and the key.
sed 's|^task:|task:\n  train: data/sick-triplets/train.jsonl|' "$WORK/two.yaml" > "$WORK/bad.yaml"
"$TRAINER" train --config "$WORK/bad.yaml" > "$WORK/bad.log" 2>&1 && fail "task.train with task.datasets was accepted"
grep -q "bad.yaml:3: task.train: and task.datasets are both given" "$WORK/bad.log" ||
  fail "task.train's error: $(cat "$WORK/bad.log")"
finish
