#!/usr/bin/env bash
# Cased and multilingual models (issue 21, acceptance 3) through the trainer's commands:
# `trainer tokenize --cased` gives Hugging Face's ids (data/golden/tokens_cased.jsonl) for every
# golden line that is one line of text; a model folder whose tokenizer_config.json says
# do_lower_case: false (bert-tiny-random's weights with the cased vocab of data/golden/cased-vocab)
# is accepted by encode, eval and train, and tells "Apple" from "apple", which the uncased folder
# cannot.
# Args: path of the trainer binary.
TRAINER=$1
source tests/integration/lib.sh

"$PY" - "$WORK" <<'PY' || fail "cannot read the golden file"
import json, sys
with open(f"{sys.argv[1]}/texts.txt", "w", encoding="utf-8", newline="\n") as texts, \
     open(f"{sys.argv[1]}/want.jsonl", "w") as want:
    for line in open("data/golden/tokens_cased.jsonl", encoding="utf-8"):
        j = json.loads(line)
        if j["variant"] != "cased" or "pair" in j or "\n" in j["text"] or "\r" in j["text"]:
            continue
        texts.write(j["text"] + "\n")
        want.write(json.dumps(j["ids"]) + "\n")
PY
"$TRAINER" tokenize --vocab data/golden/cased-vocab/vocab.txt --cased < "$WORK/texts.txt" \
  > "$WORK/got.jsonl" 2> "$WORK/tokenize.err" || fail "trainer tokenize --cased failed: $(cat "$WORK/tokenize.err")"
"$PY" - "$WORK" <<'PY' || fail "tokenize --cased differs from Hugging Face (above)"
import json, sys
want = [json.loads(l) for l in open(f"{sys.argv[1]}/want.jsonl")]
got = [json.loads(l)["ids"] for l in open(f"{sys.argv[1]}/got.jsonl")]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
print(f"tokenize --cased: {len(got)} lines, {len(want) - len(bad)} identical to Hugging Face's")
for i in bad[:5]: print(f"  line {i + 1}: want {want[i]} got {got[i]}")
sys.exit(1 if bad or len(want) != len(got) or len(want) < 20 else 0)
PY

# A cased model folder: bert-tiny-random's weights, the cased vocab, do_lower_case false.
CASED=$WORK/cased-tiny
mkdir -p "$CASED"
cp data/bert-tiny-random/config.json data/bert-tiny-random/model*.safetensors* "$CASED/"
cp data/golden/cased-vocab/vocab.txt "$CASED/"
echo '{"do_lower_case": false, "tokenizer_class": "BertTokenizer"}' > "$CASED/tokenizer_config.json"
printf 'Apple\napple\n' > "$WORK/words.txt"
for model in "$CASED" data/bert-tiny-random; do
  name=$(basename "$model")
  "$TRAINER" encode --model "$model" --input "$WORK/words.txt" --output "$WORK/$name.jsonl" \
    > "$WORK/$name.encode.log" 2>&1 || fail "encode with $name failed: $(tail -2 "$WORK/$name.encode.log")"
done
# The largest difference between the two lines' embeddings. Apple and apple batched together are
# two rows of one batch: the same tokens may differ in the last float bits (a vectorised loop's
# rows), so "the same" is within 1e-5 and "different" is above 1e-3.
max_diff() {
  "$PY" -c 'import json, sys
a, b = [json.loads(l)["embedding"] for l in open(sys.argv[1])][:2]
print(max(abs(x - y) for x, y in zip(a, b)))' "$1"
}
cased=$(max_diff "$WORK/cased-tiny.jsonl"); uncased=$(max_diff "$WORK/bert-tiny-random.jsonl")
"$PY" -c "import sys; sys.exit(0 if $cased > 1e-3 else 1)" ||
  fail "the cased model gives Apple and apple the same embedding (largest difference $cased)"
"$PY" -c "import sys; sys.exit(0 if $uncased < 1e-5 else 1)" ||
  fail "the uncased model tells Apple from apple (largest difference $uncased)"
"$TRAINER" eval --model "$CASED" --task sts --data data/stsbenchmark/sts-dev.csv > "$WORK/eval.json" 2> "$WORK/eval.err" ||
  fail "eval of the cased model failed: $(tail -2 "$WORK/eval.err")"
grep -q 'eval/spearman' "$WORK/eval.json" || fail "eval printed no spearman: $(cat "$WORK/eval.json")"
write_train_yaml "$WORK/train.yaml" model.path="$CASED" train.max_steps=3 train.batch_size=8 \
  output.dir="$WORK/out"
"$TRAINER" train --config "$WORK/train.yaml" > "$WORK/train.log" 2>&1 ||
  fail "train with the cased model failed: $(tail -3 "$WORK/train.log")"
grep -q '^step 3/3' "$WORK/train.log" || fail "train did not reach step 3: $(tail -3 "$WORK/train.log")"
finish
