#!/usr/bin/env python3
"""Rows for issue 50's distillation and listwise goldens (python3 standard library only, the same
bytes on every run). Run from the repository root:  python3 data/golden/make_distill_rows.py

  margin_rows.jsonl     the first 32 rows of data/sick-triplets/train.jsonl as
                        {"anchor", "positive", "negative", "label"}, label a stand-in teacher's
                        margin: jaccard(anchor, positive) - jaccard(anchor, negative) over lower-cased
                        whitespace words, rounded to 6 decimals (MarginMSELoss rows).
  embedding_rows.jsonl  the first 16 anchors of the same file as {"text", "label"}, label a
                        stand-in teacher embedding: 128 values of random.Random(0).gauss(0, 0.1),
                        drawn row after row, rounded to 6 decimals (MSELoss rows).
  listwise_rows.jsonl   rows 0-6 and 77 of data/rerank/stsb-dev.jsonl as {"query", "docs",
                        "labels"}: docs the positives then the negatives, labels 1 for a positive
                        and 0 for a negative (the layout of `trainer mine --output_format
                        labeled-list`, LambdaLoss and ListNetLoss rows; row 77 has 11 docs, the
                        others 10).
"""
import json
import random

TRIPLETS = "data/sick-triplets/train.jsonl"
RERANK = "data/rerank/stsb-dev.jsonl"


def words(s):
    return set(s.lower().split())


def jaccard(a, b):
    a, b = words(a), words(b)
    return len(a & b) / len(a | b) if a | b else 0.0


def write(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def main():
    triplets = [json.loads(line) for line in open(TRIPLETS, encoding="utf-8")]
    margin = []
    for t in triplets[:32]:
        label = round(jaccard(t["anchor"], t["positive"]) - jaccard(t["anchor"], t["negative"]), 6)
        margin.append({"anchor": t["anchor"], "positive": t["positive"], "negative": t["negative"],
                       "label": label})
    write("data/golden/margin_rows.jsonl", margin)
    rng = random.Random(0)
    emb = [{"text": t["anchor"], "label": [round(rng.gauss(0.0, 0.1), 6) for _ in range(128)]}
           for t in triplets[:16]]
    write("data/golden/embedding_rows.jsonl", emb)
    rerank = [json.loads(line) for line in open(RERANK, encoding="utf-8")]
    lists = []
    for i in list(range(7)) + [77]:
        r = rerank[i]
        lists.append({"query": r["query"], "docs": r["positive"] + r["negative"],
                      "labels": [1] * len(r["positive"]) + [0] * len(r["negative"])})
    write("data/golden/listwise_rows.jsonl", lists)


if __name__ == "__main__":
    main()
