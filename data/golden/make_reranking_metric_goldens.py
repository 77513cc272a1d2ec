#!/usr/bin/env python3
"""Reranking-metric goldens (data/golden/reranking_metric_goldens.json) for
trainer/tasks/reranking_metrics.h, from scikit-learn and numpy themselves.

Run from the repository root with Debian's python3-sklearn (1.2.1) and python3-numpy (1.24.2):
  /usr/bin/python3 data/golden/make_reranking_metric_goldens.py [OUT.json]

For 300 seeded random queries (2 to 16 documents each; scores rounded to one decimal so that ties
are common; 0/1 relevance, some queries with no relevant document), each query's metrics as
sentence-transformers' CrossEncoderRerankingEvaluator.compute_metrics computes them (its code,
copied below: np.argsort for mrr@10, sklearn.metrics.ndcg_score and average_precision_score), and
the means over the queries as the evaluator takes them (np.mean; a query without a relevant
document counts 0 for all three).
"""
import json
import random
import sys

import numpy as np
import sklearn
from sklearn.metrics import average_precision_score, ndcg_score

AT_K = 10


def compute_metrics(y_true, y_pred, at_k=AT_K):
    # sentence_transformers/cross_encoder/evaluation/reranking.py, compute_metrics
    ranking = np.argsort(y_pred)[::-1]
    mrr = 0
    for rank, index in enumerate(ranking[0:at_k]):
        if y_true[index]:
            mrr = 1 / (rank + 1)
            break
    ndcg = ndcg_score([y_true], [y_pred], k=at_k)
    ap = average_precision_score(y_true, y_pred)
    return mrr, ndcg, ap


def main():
    rng = random.Random(0)
    queries, mrrs, ndcgs, aps = [], [], [], []
    for q in range(300):
        n = rng.randint(2, 16)
        positives = 0 if q % 25 == 0 else rng.randint(1, max(1, n // 3))
        relevant = [1] * positives + [0] * (n - positives)
        scores = [round(rng.random(), 1) for _ in range(n)]
        queries.append({"scores": scores, "relevant": relevant})
        if positives == 0:  # the evaluator skips scoring: 0, 0, 0
            mrrs.append(0); ndcgs.append(0); aps.append(0)
            continue
        mrr, ndcg, ap = compute_metrics(relevant, np.array(scores, dtype=np.float64))
        mrrs.append(mrr); ndcgs.append(ndcg); aps.append(ap)
    gold = {"versions": {"scikit_learn": sklearn.__version__, "numpy": np.__version__},
            "at_k": AT_K, "queries": queries,
            "metrics": {"eval/map": float(np.mean(aps)), "eval/mrr@10": float(np.mean(mrrs)),
                        "eval/ndcg@10": float(np.mean(ndcgs))},
            "per_query": {"map": [float(x) for x in aps], "mrr@10": [float(x) for x in mrrs],
                          "ndcg@10": [float(x) for x in ndcgs]}}
    path = sys.argv[1] if len(sys.argv) > 1 else "data/golden/reranking_metric_goldens.json"
    with open(path, "w") as f:
        json.dump(gold, f, sort_keys=True)
        f.write("\n")
    print(gold["metrics"], file=sys.stderr)


if __name__ == "__main__":
    main()
