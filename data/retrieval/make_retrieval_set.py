#!/usr/bin/env python3
"""A small retrieval set in BEIR's layout, made from STS-B's dev split (issue 35). Standard library
only; the output is the same on every run:

  python3 data/retrieval/make_retrieval_set.py [STS_DEV_CSV [OUT_DIR]]

STS_DEV_CSV defaults to data/stsbenchmark/sts-dev.csv, OUT_DIR to data/retrieval/stsb-dev. Writes
OUT_DIR/queries.jsonl, OUT_DIR/corpus.jsonl and OUT_DIR/qrels.tsv and prints their counts.

- queries: each distinct sentence1 of a pair scored >= 4.0, in first-appearance order, "q0", "q1"...
- qrels: (query, sentence2) for every such pair, score 1, in query order then file order.
- corpus: every distinct sentence of the split (sentence1 then sentence2, row by row), "c0",
  "c1"..., except a query's text that is no query's relevant document (otherwise every query
  would retrieve itself first).
The file is read as the trainer's ReadStsb reads it: UTF-8 (a BOM dropped), lines without their
final '\r', blank lines skipped, tab-separated without quoting, at least 7 columns, the score a
number in [0, 5], sentence1 and sentence2 the 6th and 7th columns exactly as they are.
"""
import json
import os
import sys

THRESHOLD = 4.0


def read_stsb(path):
    """(score, sentence1, sentence2) for each row of an STS-B csv, as ReadStsb reads it."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    rows = []
    for number, line in enumerate(data.decode("utf-8").split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line:
            continue
        cols = line.split("\t")
        if len(cols) < 7:
            sys.exit(f"{path}:{number}: expected at least 7 tab-separated columns, got {len(cols)}")
        score = float(cols[4])
        if not 0 <= score <= 5:
            sys.exit(f"{path}:{number}: score {cols[4]} is outside [0, 5]")
        rows.append((score, cols[5], cols[6]))
    return rows


def build(rows):
    """(queries, corpus, qrels): lists of (id, text), (id, text) and (query id, corpus id)."""
    query_texts = {}  # text -> index, in first-appearance order
    relevant = {}  # query text -> its relevant texts, in file order, distinct
    for score, s1, s2 in rows:
        if score >= THRESHOLD:
            query_texts.setdefault(s1, len(query_texts))
            docs = relevant.setdefault(s1, [])
            if s2 not in docs:
                docs.append(s2)
    relevant_texts = {t for docs in relevant.values() for t in docs}
    corpus_texts = {}
    for _, s1, s2 in rows:
        for text in (s1, s2):
            if text in query_texts and text not in relevant_texts:
                continue
            corpus_texts.setdefault(text, len(corpus_texts))
    queries = [(f"q{i}", t) for t, i in query_texts.items()]
    corpus = [(f"c{i}", t) for t, i in corpus_texts.items()]
    qrels = [(f"q{query_texts[q]}", f"c{corpus_texts[d]}") for q, docs in relevant.items()
             for d in docs]
    return queries, corpus, qrels


def write_jsonl(path, items):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for _id, text in items:
            f.write(json.dumps({"_id": _id, "text": text}, ensure_ascii=False) + "\n")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "data/stsbenchmark/sts-dev.csv"
    out = sys.argv[2] if len(sys.argv) > 2 else "data/retrieval/stsb-dev"
    queries, corpus, qrels = build(read_stsb(src))
    os.makedirs(out, exist_ok=True)
    write_jsonl(os.path.join(out, "queries.jsonl"), queries)
    write_jsonl(os.path.join(out, "corpus.jsonl"), corpus)
    with open(os.path.join(out, "qrels.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, c in qrels:
            f.write(f"{q}\t{c}\t1\n")
    print(f"queries {len(queries)}, corpus {len(corpus)}, qrels {len(qrels)}")


if __name__ == "__main__":
    main()
