#!/usr/bin/env python3
"""(anchor, positive, negative) triplets from SICK, the AllNLI recipe (issue 35). Standard library
only; the output is the same on every run:

  python3 data/sick-triplets/make_triplets.py [--directions both|ab] [SICK_TXT [OUT_DIR]]

SICK_TXT defaults to data/sick/SICK.txt, OUT_DIR to data/sick-triplets. Writes OUT_DIR/train.jsonl
(SemEval_set TRAIN) and OUT_DIR/dev.jsonl (TRIAL), one {"anchor", "positive", "negative"} a line,
and prints their counts.

Within one SemEval_set, a premise's entailment and contradiction hypotheses are collected:
- ab: premise sentence_A, hypothesis sentence_B, by entailment_label (ENTAILMENT, CONTRADICTION);
- both (the default): also premise sentence_B, hypothesis sentence_A, by entailment_BA
  (B_entails_A, B_contradicts_A).
A premise's hypotheses are distinct, in file order (a row's A->B before its B->A); a hypothesis
equal to the premise, or labelled both ways for it, is dropped. A premise with at least one of each
gives one row per entailment hypothesis, its negative the contradiction hypotheses taken in turn
(the i-th positive with contradiction i mod their count); premises in order of first appearance.
The file is read as the trainer's ReadSick reads it: lines without their final '\r', blank lines
skipped, tab-separated, columns by the header's names.
"""
import json
import os
import sys

SPLITS = (("train.jsonl", "TRAIN"), ("dev.jsonl", "TRIAL"))


def read_sick(path):
    """The rows of SICK.txt as dicts keyed by the header's column names."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = [l[:-1] if l.endswith("\r") else l for l in data.decode("utf-8").split("\n")]
    lines = [l for l in lines if l]
    header = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        cols = line.split("\t")
        if len(cols) != len(header):
            sys.exit(f"{path}: expected {len(header)} columns, got {len(cols)}: {line[:80]}")
        rows.append(dict(zip(header, cols)))
    return rows


def triplets(rows, split, directions):
    """The triplets of one SemEval_set, as (anchor, positive, negative) tuples."""
    hyps = {}  # premise -> {"ENTAILMENT": [...], "CONTRADICTION": [...]}, insertion-ordered
    def add(premise, hypothesis, label):
        if label not in ("ENTAILMENT", "CONTRADICTION") or hypothesis == premise:
            return
        lists = hyps.setdefault(premise, {"ENTAILMENT": [], "CONTRADICTION": []})
        if hypothesis not in lists[label]:
            lists[label].append(hypothesis)
    for row in rows:
        if row["SemEval_set"] != split:
            continue
        add(row["sentence_A"], row["sentence_B"], row["entailment_label"])
        if directions == "both":
            label = {"B_entails_A": "ENTAILMENT",
                     "B_contradicts_A": "CONTRADICTION"}.get(row["entailment_BA"])
            add(row["sentence_B"], row["sentence_A"], label)
    out = []
    for premise, lists in hyps.items():
        both = set(lists["ENTAILMENT"]) & set(lists["CONTRADICTION"])
        pos = [h for h in lists["ENTAILMENT"] if h not in both]
        neg = [h for h in lists["CONTRADICTION"] if h not in both]
        if pos and neg:
            out += [(premise, p, neg[i % len(neg)]) for i, p in enumerate(pos)]
    return out


def main():
    args = sys.argv[1:]
    directions = "both"
    if args[:1] == ["--directions"] and len(args) > 1 and args[1] in ("both", "ab"):
        directions, args = args[1], args[2:]
    elif args and args[0].startswith("-"):
        sys.exit(__doc__)
    src = args[0] if args else "data/sick/SICK.txt"
    out = args[1] if len(args) > 1 else "data/sick-triplets"
    rows = read_sick(src)
    os.makedirs(out, exist_ok=True)
    for name, split in SPLITS:
        found = triplets(rows, split, directions)
        with open(os.path.join(out, name), "w", encoding="utf-8", newline="\n") as f:
            for a, p, n in found:
                f.write(json.dumps({"anchor": a, "positive": p, "negative": n},
                                   ensure_ascii=False) + "\n")
        print(f"{name} ({split}, {directions}): {len(found)} triplets, "
              f"{len({a for a, _, _ in found})} anchors")


if __name__ == "__main__":
    main()
