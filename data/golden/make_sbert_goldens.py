#!/usr/bin/env python3
"""Sentence-transformers goldens for issue 35 (data/golden/sbert_goldens.json).

Run on the GPU host (sentence-transformers 6.0.1, transformers 5.17, torch 2.11), from the
repository root:  python3 data/golden/make_sbert_goldens.py [OUT.json]

For data/bert-tiny-random as SentenceTransformer(Transformer(max_seq_length 128), mean Pooling),
float32 on the CPU, every dropout set to 0, the model in train mode:
  losses: for each case, the loss sentence-transformers computes on the first BATCH rows of its
          file (in file order) and the total norm of the encoder's gradient after backward.
  retrieval: InformationRetrievalEvaluator (cosine) on data/retrieval/stsb-dev, model in eval
          mode: every metric it reports, keys as ours ("eval/ndcg@10").
"""
import json
import sys

import torch
from sentence_transformers import SentenceTransformer, losses, models
from sentence_transformers.evaluation import InformationRetrievalEvaluator

MODEL = "data/bert-tiny-random"
BATCH = 16
STSB = "data/stsbenchmark/sts-train.csv"
TRIPLETS = "data/sick-triplets/train.jsonl"
DIMS = [128, 64, 32]
PROMPTS = {"anchor": "query: ", "positive": "passage: ", "negative": "passage: "}

# name -> (task.type, task.loss, data, columns, extra task keys)
CASES = {
    "cosine": ("sts", "cosine", "stsb", None, {}),
    "cosent": ("sts", "cosent", "stsb", None, {}),
    "angle": ("sts", "angle", "stsb", None, {}),
    "mnrl_pairs": ("mnrl", "mnrl", "triplets", ["anchor", "positive"], {}),
    "mnrl_triplets": ("mnrl", "mnrl", "triplets", None, {}),
    "cached_mnrl": ("mnrl", "cached_mnrl", "triplets", None, {"cached_mini_batch": 4}),
    "matryoshka_mnrl": ("mnrl", "mnrl", "triplets", None, {"matryoshka_dims": DIMS}),
    "matryoshka_cosent": ("sts", "cosent", "stsb", None,
                          {"matryoshka_dims": DIMS, "matryoshka_weights": [1.0, 0.5, 0.25]}),
    "matryoshka_cached_mnrl": ("mnrl", "cached_mnrl", "triplets", None,
                               {"cached_mini_batch": 4, "matryoshka_dims": DIMS}),
    # Issue 50 (not in sbert_goldens.json until this script runs again on the GPU host):
    "symmetric_mnrl": ("mnrl", "symmetric_mnrl", "triplets", None, {}),
    "triplet": ("mnrl", "triplet", "triplets", None, {}),
    "margin_mse": ("margin", "margin_mse", "margins", ["anchor", "positive", "negative"],
                   {"label_column": "label"}),
    "mse": ("embedding", "mse", "embeddings", ["text"], {}),
    "gist": ("mnrl", "gist", "triplets", None, {"guide_model": MODEL}),
    "cached_gist": ("mnrl", "cached_gist", "triplets", None,
                    {"guide_model": MODEL, "cached_mini_batch": 4}),
    "mnrl_prompts": ("mnrl", "mnrl", "triplets", None, {"prompts": PROMPTS}),
    "mnrl_prompts_excluded": ("mnrl", "mnrl", "triplets", None,
                              {"prompts": PROMPTS, "include_prompt": False}),
    "mnrl_one_prompt": ("mnrl", "mnrl", "triplets", ["anchor", "positive"],
                        {"prompts": "query: ", "include_prompt": False}),
}
FILES = {"stsb": STSB, "triplets": TRIPLETS, "margins": "data/golden/margin_rows.jsonl",
         "embeddings": "data/golden/embedding_rows.jsonl"}


def load_model():
    word = models.Transformer(MODEL, max_seq_length=128)
    pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[word, pool], device="cpu")
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    return model


def stsb_rows():
    rows = []
    for line in open(STSB, encoding="utf-8"):
        f = line.rstrip("\n").rstrip("\r").split("\t")
        rows.append(([f[5], f[6]], float(f[4]) / 5.0))
        if len(rows) == BATCH:
            return rows
    return rows


def triplet_rows(columns, path=TRIPLETS):
    """(texts, label or None) of the first BATCH rows: the texts of `columns` (all but "label" if
    None), the row's "label" if it has one."""
    rows = []
    for line in open(path, encoding="utf-8"):
        o = json.loads(line)
        names = columns or [k for k in o.keys() if k != "label"]
        rows.append(([o[c] for c in names], o.get("label")))
        if len(rows) == BATCH:
            return rows
    return rows


def make_loss(model, loss, extra):
    if loss == "cosine":
        base = losses.CosineSimilarityLoss(model)
    elif loss == "cosent":
        base = losses.CoSENTLoss(model)
    elif loss == "angle":
        base = losses.AnglELoss(model)
    elif loss == "mnrl":
        base = losses.MultipleNegativesRankingLoss(model)
    elif loss == "symmetric_mnrl":
        base = losses.MultipleNegativesSymmetricRankingLoss(model)
    elif loss == "triplet":
        base = losses.TripletLoss(model)
    elif loss == "margin_mse":
        base = losses.MarginMSELoss(model)
    elif loss == "mse":
        base = losses.MSELoss(model)
    elif loss in ("gist", "cached_gist"):
        guide = load_model()
        if loss == "gist":
            base = losses.GISTEmbedLoss(model, guide)
        else:
            base = losses.CachedGISTEmbedLoss(model, guide, mini_batch_size=extra["cached_mini_batch"])
    elif loss == "cached_mnrl":
        base = losses.CachedMultipleNegativesRankingLoss(model,
                                                         mini_batch_size=extra["cached_mini_batch"])
    if "matryoshka_dims" in extra:
        return losses.MatryoshkaLoss(model, base, matryoshka_dims=extra["matryoshka_dims"],
                                     matryoshka_weights=extra.get("matryoshka_weights"))
    return base


def loss_case(name, case):
    type_, loss, data, columns, extra = case
    model = load_model()
    model.train()
    rows = stsb_rows() if data == "stsb" else triplet_rows(columns, FILES[data])
    n_texts = len(rows[0][0])
    names = columns or list(PROMPTS.keys())[:n_texts]
    features = []
    prompts = extra.get("prompts")
    for i in range(n_texts):
        # As SentenceTransformerDataCollator: the column's prompt prepended to each text; its
        # length in tokens (less a trailing special token) as prompt_length for the pooling.
        prompt = prompts if isinstance(prompts, str) else (prompts or {}).get(names[i])
        texts = [(prompt or "") + r[0][i] for r in rows]
        f = model.tokenize(texts)
        if prompt and extra.get("include_prompt", True) is False:
            ids = model.tokenize([prompt])["input_ids"]
            length = ids.shape[-1]
            if int(ids[0, -1]) in model.tokenizer.all_special_ids:
                length -= 1
            f["prompt_length"] = torch.tensor([length] * len(rows), dtype=torch.int)
        features.append(f)
    if extra.get("include_prompt", True) is False:
        model[1].include_prompt = False
    labels = torch.tensor([r[1] if r[1] is not None else 0.0 for r in rows])
    fn = make_loss(model, loss, extra)
    value = fn(features, labels)
    value.backward()
    sq = sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None)
    out = {"type": type_, "loss": loss, "data": FILES[data],
           "format": "stsb" if data == "stsb" else "jsonl", "batch_size": BATCH,
           "value": float(value), "grad_norm": sq ** 0.5}
    if columns:
        out["columns"] = columns
    out.update(extra)
    print(name, out["value"], out["grad_norm"], file=sys.stderr)
    return out


def retrieval():
    model = load_model()
    model.eval()
    base = "data/retrieval/stsb-dev/"
    queries = {o["_id"]: o["text"] for o in map(json.loads, open(base + "queries.jsonl"))}
    corpus = {o["_id"]: o["text"] for o in map(json.loads, open(base + "corpus.jsonl"))}
    relevant = {}
    lines = open(base + "qrels.tsv").read().splitlines()
    for line in lines[1:]:
        q, c, s = line.split("\t")
        if float(s) > 0:
            relevant.setdefault(q, set()).add(c)
    ev = InformationRetrievalEvaluator(queries, corpus, relevant, name="r", batch_size=64)
    res = ev(model)
    out = {}
    for k, v in res.items():
        key = k.split("cosine_", 1)[1] if "cosine_" in k else None
        if key:
            out["eval/" + key] = float(v)
    print("retrieval", out, file=sys.stderr)
    return out


def triplet_eval():
    """TripletEvaluator (cosine) on every row of data/sick-triplets/train.jsonl, model in eval mode."""
    from sentence_transformers.evaluation import TripletEvaluator
    model = load_model()
    model.eval()
    rows = [json.loads(line) for line in open(TRIPLETS, encoding="utf-8")]
    ev = TripletEvaluator([r["anchor"] for r in rows], [r["positive"] for r in rows],
                          [r["negative"] for r in rows], name="t", batch_size=64)
    res = {k: float(v) for k, v in ev(model).items()}
    print("triplet_eval", res, file=sys.stderr)
    return {"data": TRIPLETS, "rows": len(rows), "returned": res,
            "metrics": {"eval/accuracy": res.get("t_cosine_accuracy")}}


def safe(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # one failing case keeps the others
        print("FAILED", fn.__name__, args[:1], repr(e), file=sys.stderr)
        return None


def main():
    import sentence_transformers
    torch.manual_seed(0)
    cases = {name: safe(loss_case, name, case) for name, case in CASES.items()}
    gold = {"sentence_transformers": sentence_transformers.__version__,
            "torch": torch.__version__, "model": MODEL,
            "losses": {k: v for k, v in cases.items() if v is not None},
            "triplet_eval": safe(triplet_eval),
            "retrieval": {"queries": "data/retrieval/stsb-dev/queries.jsonl",
                          "corpus": "data/retrieval/stsb-dev/corpus.jsonl",
                          "qrels": "data/retrieval/stsb-dev/qrels.tsv",
                          "metrics": retrieval()}}
    path = sys.argv[1] if len(sys.argv) > 1 else "data/golden/sbert_goldens.json"
    with open(path, "w") as f:
        json.dump(gold, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
