#!/usr/bin/env python3
"""sentence-transformers' util.mine_hard_negatives (5.2-dev's sentence_transformers/util/
hard_negatives.py, commit 85ec645), replayed step for step without `datasets`, on embeddings given
as .npy files, for tests/integration/mine_test.sh. The selection code below is the function's,
line for line (torch ops on the CPU), minus the faiss, cache, multi-process, cross-encoder and
random-sampling branches and the statistics print.

Usage: mine_replay.py PAIRS.jsonl QUERY_EMB.npy CORPUS_EMB.npy OUT.jsonl [--corpus FILE]
       [--num_negatives N] [--range_min A] [--range_max B] [--max_score X] [--min_score Y]
       [--absolute_margin M] [--relative_margin R] [--output_format F]
The embeddings are of the texts in the order the function embeds them: the distinct anchors, and
dict.fromkeys(corpus-or-positives + positives). Needs torch and numpy (Debian's python3-torch).
"""
import argparse
import json

import numpy as np
import torch


def cos_sim(a, b):
    a = torch.nn.functional.normalize(a, p=2, dim=1)
    b = torch.nn.functional.normalize(b, p=2, dim=1)
    return torch.mm(a, b.transpose(0, 1))


def pairwise_cos_sim(a, b):
    return (torch.nn.functional.normalize(a, p=2, dim=1) * torch.nn.functional.normalize(b, p=2, dim=1)).sum(dim=-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("pairs"); p.add_argument("query_emb"); p.add_argument("corpus_emb"); p.add_argument("out")
    p.add_argument("--corpus"); p.add_argument("--num_negatives", type=int, default=3)
    p.add_argument("--range_min", type=int, default=0); p.add_argument("--range_max", type=int)
    for k in ("max_score", "min_score", "absolute_margin", "relative_margin"):
        p.add_argument("--" + k, type=float)
    p.add_argument("--output_format", default="triplet")
    a = p.parse_args()
    rows = [json.loads(l) for l in open(a.pairs, encoding="utf-8") if l.strip()]
    anchor_column_name, positive_column_name = list(rows[0].keys())[:2]
    num_negatives, range_min, range_max = a.num_negatives, a.range_min, a.range_max
    max_score, min_score = a.max_score, a.min_score
    absolute_margin, relative_margin = a.absolute_margin, a.relative_margin
    output_format = a.output_format
    corpus = None
    if a.corpus:
        corpus = [l.rstrip("\n") for l in open(a.corpus, encoding="utf-8") if l.strip()]

    counts = {}
    for r in rows:
        counts[r[anchor_column_name]] = counts.get(r[anchor_column_name], 0) + 1
    positives_per_query = list(counts.values())
    max_positives = max(positives_per_query)
    if range_max is None:
        if absolute_margin is not None or relative_margin is not None or max_score is not None:
            range_max = range_min + (num_negatives * 10) + max_positives
        else:
            range_max = range_min + num_negatives + max_positives
    queries = [r[anchor_column_name] for r in rows]
    positives = [r[positive_column_name] for r in rows]
    separate_corpus = corpus is not None
    if not separate_corpus:
        corpus = positives
    corpus = list(dict.fromkeys(corpus + positives))
    corpus_idx = {text: idx for idx, text in enumerate(corpus)}
    all_queries = queries.copy()
    queries = list(dict.fromkeys(queries))
    queries_idx = {query: idx for idx, query in enumerate(queries)}
    n_queries = len(queries)
    batch_idx = torch.arange(n_queries).unsqueeze(-1)
    # As model.encode(..., normalize_embeddings=True) returns them (cos_sim normalizes again).
    query_embeddings = torch.nn.functional.normalize(torch.from_numpy(np.load(a.query_emb)).float(), p=2, dim=1)
    corpus_embeddings = torch.nn.functional.normalize(torch.from_numpy(np.load(a.corpus_emb)).float(), p=2, dim=1)
    assert query_embeddings.shape[0] == n_queries and corpus_embeddings.shape[0] == len(corpus)

    scores = cos_sim(query_embeddings, corpus_embeddings)
    scores, indices = torch.topk(scores, k=range_max + max_positives, dim=1)
    positive_indices = [[] for _ in range(n_queries)]
    for query, positive in zip(all_queries, positives):
        query_idx = queries_idx[query]
        positive_indices[query_idx].append(corpus_idx[positive])
    n_positives = [len(p) for p in positive_indices]
    positives = []
    all_queries = []
    for idx in range(n_queries):
        positives.extend([corpus[doc_idx] for doc_idx in positive_indices[idx]])
        all_queries.extend([queries[idx]] * n_positives[idx])
    positive_indices = [torch.tensor(p) for p in positive_indices]
    query_embeddings = query_embeddings[[idx for idx in range(n_queries) for _ in range(n_positives[idx])]]
    positive_embeddings = corpus_embeddings[torch.cat(positive_indices).tolist()]
    positive_scores = pairwise_cos_sim(query_embeddings, positive_embeddings)

    positive_mask = torch.stack([torch.isin(indices[q_idx], positive_indices[q_idx]) for q_idx in range(n_queries)])
    scores[positive_mask] = -float("inf")
    if absolute_margin is not None or relative_margin is not None:
        max_positive_scores = torch.empty(n_queries, dtype=positive_scores.dtype)
        start_idx = 0
        for q_idx in range(n_queries):
            max_positive_scores[q_idx] = torch.min(positive_scores[start_idx : start_idx + n_positives[q_idx]])
            start_idx += n_positives[q_idx - 1]
        if absolute_margin is not None:
            removed_indices = scores + absolute_margin > max_positive_scores.repeat(scores.size(1), 1).T
            scores[removed_indices] = -float("inf")
        if relative_margin is not None:
            removed_indices = scores > max_positive_scores.repeat(scores.size(1), 1).T * (1 - relative_margin)
            scores[removed_indices] = -float("inf")
    if max_score is not None:
        scores[scores > max_score] = -float("inf")
    if min_score is not None:
        scores[scores < min_score] = -float("inf")
    negative_scores, local_indices = torch.topk(scores, k=range_max, dim=1)
    indices = indices[batch_idx, local_indices]
    if range_min:
        indices = indices[:, range_min:]
        negative_scores = negative_scores[:, range_min:]
    indices = indices[:, :num_negatives]
    negative_scores = negative_scores[:, :num_negatives]
    indices = torch.cat([indices[idx].repeat(n_positives[idx], 1) for idx in range(n_queries)])
    negative_scores = torch.cat([negative_scores[idx].repeat(n_positives[idx], 1) for idx in range(n_queries)])

    if output_format == "triplet":
        indices_to_keep = negative_scores != -float("inf")
        anchor_indices = torch.empty_like(indices)
        pos_indices = torch.empty_like(indices)
        indices = indices[indices_to_keep]
        start_idx = 0
        for q_idx in range(n_queries):
            anchor_indices[start_idx : start_idx + n_positives[q_idx]] = torch.tensor(q_idx).repeat(n_positives[q_idx], num_negatives)
            pos_indices[start_idx : start_idx + n_positives[q_idx]] = positive_indices[q_idx].repeat(num_negatives, 1).T
            start_idx += n_positives[q_idx]
        anchor_indices = anchor_indices[indices_to_keep]
        positive_indices = pos_indices[indices_to_keep]
        data = {anchor_column_name: [], positive_column_name: [], "negative": []}
        for anchor_idx, positive_idx, negative_idx in zip(anchor_indices, positive_indices, indices):
            data[anchor_column_name].append(queries[anchor_idx])
            data[positive_column_name].append(corpus[positive_idx])
            data["negative"].append(corpus[negative_idx])
    elif output_format == "labeled-pair":
        data = {anchor_column_name: [], positive_column_name: [], "label": []}
        for query_idx in range(n_queries):
            for positive_idx in positive_indices[query_idx]:
                data[anchor_column_name].append(queries[query_idx])
                data[positive_column_name].append(corpus[positive_idx])
                data["label"].append(1)
            for negative_idx, negative_score in zip(indices[query_idx], negative_scores[query_idx]):
                if negative_score == -float("inf"):
                    continue
                data[anchor_column_name].append(queries[query_idx])
                data[positive_column_name].append(corpus[negative_idx])
                data["label"].append(0)
    elif output_format == "n-tuple":
        indices_to_keep = (negative_scores != -float("inf")).all(dim=1)
        indices = indices[indices_to_keep]
        data = {
            anchor_column_name: [all_queries[idx] for idx, keep in enumerate(indices_to_keep) if keep],
            positive_column_name: [positives[idx] for idx, keep in enumerate(indices_to_keep) if keep],
            **{f"negative_{i}": [corpus[neg_idx] for neg_idx in neg_indices] for i, neg_indices in enumerate(indices.T, start=1)},
        }
    else:  # labeled-list
        indices_to_keep = negative_scores != -float("inf")
        data = {
            anchor_column_name: [all_queries[idx] for idx, keep_row in enumerate(indices_to_keep) if keep_row.any()],
            positive_column_name: [
                [positives[idx]] + [corpus[index] for keep, index in zip(keep_row, indices_row) if keep]
                for idx, (keep_row, indices_row) in enumerate(zip(indices_to_keep, indices)) if keep_row.any()],
            "labels": [[1] + [0] * int(sum(keep_row)) for keep_row in indices_to_keep if keep_row.any()],
        }
    columns = list(data.keys())
    n = len(data[columns[0]])
    with open(a.out, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({c: data[c][i] for c in columns}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
