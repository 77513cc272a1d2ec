#!/usr/bin/env python3
"""A small reranking set for cross-encoders (issue 50), made from the STS-B dev retrieval set.
Standard library only; the output is the same on every run:

  python3 data/rerank/make_rerank_set.py [RETRIEVAL_DIR [OUT.jsonl]]

RETRIEVAL_DIR defaults to data/retrieval/stsb-dev (queries.jsonl, corpus.jsonl, qrels.tsv in BEIR's
layout, see data/retrieval/SOURCE.md), OUT.jsonl to data/rerank/stsb-dev.jsonl. Prints the counts.

One JSON object a line, {"query": str, "positive": [str, ...], "negative": [str, ...]}, the layout of
sentence-transformers' CrossEncoderRerankingEvaluator samples:
- query: the first MAX_QUERIES queries of queries.jsonl that have a relevant document, in file order;
- positive: the texts of the query's relevant documents (qrels.tsv score > 0), in qrels order;
- negative: NEGATIVES distinct corpus texts, none of them relevant to the query nor the query's own
  text, drawn by one random.Random(SEED) for the whole file (rng.sample over the candidate corpus
  documents in corpus order, query after query), kept in the order drawn.
"""
import json
import os
import random
import sys

MAX_QUERIES = 100
NEGATIVES = 9
SEED = 0


def read_jsonl(path):
    """(id, text) for each line of a BEIR queries/corpus file, in file order."""
    with open(path, encoding="utf-8") as f:
        return [(o["_id"], o["text"]) for o in map(json.loads, f) if o]


def read_qrels(path):
    """query id -> relevant corpus ids (score > 0), in file order, distinct."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines or lines[0].split("\t")[:2] != ["query-id", "corpus-id"]:
        sys.exit(f"{path}: expected the header query-id<TAB>corpus-id<TAB>score")
    relevant = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        cols = line.split("\t")
        if len(cols) != 3:
            sys.exit(f"{path}:{number}: expected 3 tab-separated columns, got {len(cols)}")
        if float(cols[2]) > 0:
            docs = relevant.setdefault(cols[0], [])
            if cols[1] not in docs:
                docs.append(cols[1])
    return relevant


def build(queries, corpus, relevant):
    """The samples: a list of {"query", "positive", "negative"} dicts."""
    rng = random.Random(SEED)
    text_of = dict(corpus)
    samples = []
    for qid, query in queries:
        if qid not in relevant:
            continue
        positive = [text_of[c] for c in relevant[qid]]
        excluded = set(positive) | {query}
        candidates = [text for cid, text in corpus if text not in excluded]
        negative = rng.sample(candidates, NEGATIVES)
        samples.append({"query": query, "positive": positive, "negative": negative})
        if len(samples) == MAX_QUERIES:
            break
    return samples


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "data/retrieval/stsb-dev"
    out = sys.argv[2] if len(sys.argv) > 2 else "data/rerank/stsb-dev.jsonl"
    queries = read_jsonl(os.path.join(src, "queries.jsonl"))
    corpus = read_jsonl(os.path.join(src, "corpus.jsonl"))
    if len({text for _, text in corpus}) != len(corpus):
        sys.exit(f"{src}/corpus.jsonl: the corpus texts are not distinct")
    samples = build(queries, corpus, read_qrels(os.path.join(src, "qrels.tsv")))
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for sample in samples:
            f.write(json.dumps(sample, ensure_ascii=False) + "\n")
    positives = sum(len(s["positive"]) for s in samples)
    print(f"queries {len(samples)}, positives {positives}, negatives {NEGATIVES * len(samples)}")


if __name__ == "__main__":
    main()
