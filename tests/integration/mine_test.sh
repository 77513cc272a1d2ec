#!/usr/bin/env bash
# `trainer mine` (issue 50) against sentence-transformers' mine_hard_negatives replayed step for
# step (tests/integration/mine_replay.py: the function's own selection code, torch on the CPU) on
# the same embeddings (`trainer encode` of the texts in the order the function embeds them): the
# rows are identical for each output format and filter below. Then bad input, one line each.
# (sampling_strategy random draws with tunefleet's own seeded generator, not Python's random: its
# rows are not compared; its pool is the one "top" draws from.)
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh
M=data/bert-tiny-random

head -300 data/sick-triplets/train.jsonl > "$WORK/pairs.jsonl"
printf 'A dog runs on the grass.\nTwo people are cooking.\nA man plays a guitar on stage.\n' > "$WORK/extra.txt"
# The texts as the function embeds them: the distinct anchors; dict.fromkeys(corpus + positives).
"$PY" - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
rows = [json.loads(l) for l in open(w + "/pairs.jsonl")]
a, p = list(rows[0])[:2]
extra = [l.rstrip("\n") for l in open(w + "/extra.txt") if l.strip()]
pos = [r[p] for r in rows]
for name, texts in (("queries", list(dict.fromkeys(r[a] for r in rows))),
                    ("corpus", list(dict.fromkeys(pos + pos))),
                    ("corpus_extra", list(dict.fromkeys(extra + pos)))):
    open("%s/%s.txt" % (w, name), "w").write("".join(t + "\n" for t in texts))
PY
for t in queries corpus corpus_extra; do
  "$TRAINER" encode --model "$M" --input "$WORK/$t.txt" --output "$WORK/$t.npy" --batch_size 32 \
    2>>"$WORK/encode.err" || fail "encode $t: $(tail -3 "$WORK/encode.err")"
done

# case: trainer mine flags (the replay takes the same ones but --corpus)
check() {
  local name=$1; shift
  local corpus_npy="$WORK/corpus.npy" replay_corpus=()
  if [[ " $* " == *" --corpus "* ]]; then corpus_npy="$WORK/corpus_extra.npy"; replay_corpus=(--corpus "$WORK/extra.txt"); fi
  local flags=() skip=0
  for f in "$@"; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    if [ "$f" = --corpus ]; then skip=1; continue; fi
    flags+=("$f")
  done
  "$TRAINER" mine --model "$M" --data "$WORK/pairs.jsonl" --output "$WORK/$name.ours.jsonl" \
    --batch_size 32 "$@" 2>"$WORK/$name.err" || { fail "$name: trainer mine: $(tail -3 "$WORK/$name.err")"; return; }
  "$PY" tests/integration/mine_replay.py "$WORK/pairs.jsonl" "$WORK/queries.npy" "$corpus_npy" \
    "$WORK/$name.theirs.jsonl" "${replay_corpus[@]}" "${flags[@]}" || { fail "$name: the replay failed"; return; }
  "$PY" - "$WORK/$name.ours.jsonl" "$WORK/$name.theirs.jsonl" "$name" <<'PY' || fail "$name: the rows differ"
import json, sys
ours = [json.loads(l) for l in open(sys.argv[1])]
theirs = [json.loads(l) for l in open(sys.argv[2])]
for i, (o, t) in enumerate(zip(ours, theirs)):
    if o != t or list(o) != list(t):
        sys.exit("row %d: ours %s, the function's %s" % (i + 1, o, t))
assert len(ours) == len(theirs), (len(ours), len(theirs))
assert ours, "no rows"
print("%s: %d rows identical" % (sys.argv[3], len(ours)))
PY
}
check triplet
check ntuple --output_format n-tuple --num_negatives 2 --range_min 1
check labeled_pair --output_format labeled-pair --absolute_margin 0
check labeled_list --output_format labeled-list --num_negatives 5 --max_score 0.995 --min_score 0.5
check relative --relative_margin 0.001 --range_max 40
check corpus --corpus "$WORK/extra.txt" --num_negatives 1

"$TRAINER" mine --model "$M" --data "$WORK/pairs.jsonl" --output "$WORK/random.jsonl" \
  --sampling_strategy random --seed 7 2>"$WORK/random.err" || fail "random sampling: $(cat "$WORK/random.err")"
[ "$(wc -l < "$WORK/random.jsonl")" -gt 0 ] || fail "random sampling mined nothing"

out=$("$TRAINER" mine --model "$M" --data "$WORK/pairs.jsonl" --output "$WORK/x.jsonl" --output_format pairs 2>&1); rc=$?
[ "$rc" -eq 2 ] && [[ "$out" == *"--output_format must be triplet, n-tuple, labeled-pair or labeled-list, got pairs"* ]] ||
  fail "a bad --output_format: rc $rc, $out"
head -3 "$WORK/pairs.jsonl" > "$WORK/three.jsonl"
out=$("$TRAINER" mine --model "$M" --data "$WORK/three.jsonl" --output "$WORK/x.jsonl" 2>&1); rc=$?
[ "$rc" -eq 2 ] && [[ "$out" == *"the corpus has 3 distinct texts, fewer than the 5 candidates"* ]] ||
  fail "a corpus too small: rc $rc, $out"
finish
