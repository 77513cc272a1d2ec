#!/usr/bin/env bash
# Every command takes every model family (issue 34, acceptance 1 and 3), on the golden folders of
# data/golden/families (Sentence-Transformers layout, as the Hub's): a RoBERTa encoder under a
# cased WordPiece BertTokenizer (klue/roberta-base's layout), an XLM-R encoder with a SentencePiece
# model, an MPNet encoder, a DistilBERT encoder (its own config keys, no pooler).
#   - `trainer tokenize --model DIR` gives Hugging Face's ids (family_goldens.json) for every
#     golden line that is one line of text;
#   - `trainer encode` gives sentence-transformers' embeddings (within 1e-4);
#   - `trainer eval`, `trainer train` (20 steps, saving Sentence-Transformers layout) and
#     `trainer convert` work, and what they save encodes again as its source would;
#   - a dev-mode sweep over the RoBERTa folder (trainer.overrides: {model.path: ...}) completes.
# Args: trainer binary, hpo binary.
TRAINER=$1 HPO=$2
source tests/integration/lib.sh

for name in roberta-klue xlm-r mpnet distilbert; do
  dir=data/golden/families/$name
  "$PY" - "$WORK" "$name" <<'PY' || fail "$name: cannot read the golden file"
import json, sys
work, name = sys.argv[1:3]
g = json.load(open("data/golden/families/family_goldens.json"))[name]
with open(f"{work}/{name}.texts", "w", encoding="utf-8", newline="\n") as texts, \
     open(f"{work}/{name}.want", "w") as want, open(f"{work}/{name}.emb", "w") as emb:
    singles = [l for l in g["ids"] if "pair" not in l and l["max_len"] == 128]
    for line, e in zip(singles, g["mean_pooled"]):
        if "\n" in line["text"] or "\r" in line["text"]:
            continue
        texts.write(line["text"] + "\n")
        want.write(json.dumps(line["ids"]) + "\n")
        emb.write(json.dumps(e) + "\n")
PY
  "$TRAINER" tokenize --model "$dir" --max_len 128 < "$WORK/$name.texts" > "$WORK/$name.ids" \
    2> "$WORK/$name.tokenize.err" || fail "$name: tokenize failed: $(cat "$WORK/$name.tokenize.err")"
  "$TRAINER" encode --model "$dir" --input "$WORK/$name.texts" --output "$WORK/$name.got" \
    > "$WORK/$name.encode.log" 2>&1 || fail "$name: encode failed: $(tail -2 "$WORK/$name.encode.log")"
  "$PY" - "$WORK" "$name" <<'PY' || fail "$name: tokenize or encode differs from Hugging Face (above)"
import json, sys
work, name = sys.argv[1:3]
want = [json.loads(l) for l in open(f"{work}/{name}.want")]
got = [json.loads(l)["ids"] for l in open(f"{work}/{name}.ids")]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
emb_want = [json.loads(l) for l in open(f"{work}/{name}.emb")]
emb_got = [json.loads(l)["embedding"] for l in open(f"{work}/{name}.got")]
worst = max(abs(a - b) for w, g in zip(emb_want, emb_got) for a, b in zip(w, g))
print(f"{name}: tokenize {len(got) - len(bad)}/{len(want)} lines identical to AutoTokenizer; "
      f"encode vs sentence-transformers max abs {worst:.2g}")
for i in bad[:3]: print(f"  line {i + 1}: want {want[i]} got {got[i]}")
sys.exit(1 if bad or len(want) != len(got) or len(want) < 15 or len(emb_got) != len(emb_want)
         or worst > 1e-4 else 0)
PY
  "$TRAINER" eval --model "$dir" --task sts --data data/stsbenchmark/sts-dev.csv \
    > "$WORK/$name.eval" 2> "$WORK/$name.eval.err" || fail "$name: eval failed: $(tail -2 "$WORK/$name.eval.err")"
  grep -q '"examples": 1500' "$WORK/$name.eval" || fail "$name: eval printed: $(cat "$WORK/$name.eval")"
  write_train_yaml "$WORK/$name.yaml" model.path="$dir" train.max_steps=20 train.batch_size=16 \
    output.dir="$WORK/$name-run" output.save=last
  "$TRAINER" train --config "$WORK/$name.yaml" > "$WORK/$name.train.log" 2>&1 ||
    fail "$name: train failed: $(tail -3 "$WORK/$name.train.log")"
  "$TRAINER" convert --model "$dir" --output "$WORK/$name-convert" --pooling mean \
    > "$WORK/$name.convert.log" 2>&1 || fail "$name: convert failed: $(tail -2 "$WORK/$name.convert.log")"
  for saved in "$WORK/$name-run/model" "$WORK/$name-convert"; do
    for f in config.json model.safetensors modules.json 1_Pooling/config.json tokenizer.json; do
      [ -f "$saved/$f" ] || fail "$name: $saved has no $f"
    done
    grep -q "\"model_type\": \"$(sed -n 's/.*"model_type": "\([^"]*\)".*/\1/p' "$dir/config.json")\"" \
      "$saved/config.json" || fail "$name: $saved/config.json has another model_type"
    "$TRAINER" tokenize --model "$saved" --max_len 128 < "$WORK/$name.texts" > "$WORK/$name.ids2" ||
      fail "$name: tokenize of $saved failed"
    cmp -s "$WORK/$name.ids" "$WORK/$name.ids2" || fail "$name: $saved tokenizes otherwise than its source"
  done
  "$TRAINER" encode --model "$WORK/$name-convert" --input "$WORK/$name.texts" \
    --output "$WORK/$name.conv.got" > /dev/null 2>&1 || fail "$name: encode of the converted folder failed"
  cmp -s "$WORK/$name.got" "$WORK/$name.conv.got" || fail "$name: the converted folder encodes otherwise"
done

# A dev-mode sweep over the RoBERTa folder: 3 random trials, the trainer's model from the sweep's
# overrides.
out=$("$HPO" sweep configs/lr.yaml search.method=random search.random.trials=3 \
      'trainer.overrides={train.epochs: 1, train.max_steps: 40, output.checkpoint: false, model.path: data/golden/families/roberta-klue}' \
      max_concurrent_trials=2 --journal "$WORK/sweep/journal.log" 2>"$WORK/sweep.err"); rc=$?
echo "$out" | tail -4
[ "$rc" -eq 0 ] || fail "the sweep over the RoBERTa folder exited $rc: $(tail -5 "$WORK/sweep.err")"
echo "$out" | grep -qE '^best trial #[0-9]+: eval/spearman=' || fail "no best trial in the summary"
grep -q 'data/golden/families/roberta-klue' "$WORK"/sweep/trial-0/.tunefleet/config.yaml ||
  fail "trial 0 did not train the RoBERTa folder"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
