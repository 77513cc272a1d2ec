#!/usr/bin/env python3
"""Cross-encoder goldens for issue 50 (data/golden/cross_encoder_goldens.json).

Run on the GPU host (sentence-transformers 6.0.1, transformers 5.17, torch 2.11, scikit-learn), from
the repository root:  python3 data/golden/make_cross_encoder_goldens.py [OUT.json]

Writes data/golden/cross_encoder_head.safetensors (K=1) and cross_encoder_head3.safetensors (K=3):
torch.manual_seed(0) before each, classifier.weight normal(0, 0.02) [K, 128], classifier.bias zeros
[K], float32. Each becomes, with data/bert-tiny-random, a BertForSequenceClassification folder in a
temporary directory (data/golden/make_cross_encoder_folder.py), loaded as CrossEncoder(folder,
device="cpu"), float32, every dropout set to 0. Then:
  predict: CrossEncoder.predict (default activation: Sigmoid for K=1, Identity for K=3) on the
          first 32 pairs of data/stsbenchmark/sts-dev.csv, one batch.
  bce: K=1, model in train mode, BinaryCrossEntropyLoss on the first 16 rows of
          data/stsbenchmark/sts-train.csv, labels score / 5: the loss and the total L2 norm of the
          gradient of every parameter after backward.
  ce: K=3, the same with CrossEntropyLoss on the first 16 rows of data/sick/SICK.txt, labels
          ENTAILMENT 0, NEUTRAL 1, CONTRADICTION 2 (trainer/data/datasets.cc's ReadSick).
  mnrl: K=1, the cross-encoder MultipleNegativesRankingLoss with num_negatives=None (every in-batch
          candidate: the default 4 draws them with torch.multinomial) on the first 16 rows of
          data/sick-triplets/train.jsonl (anchor, positive, negative).
  lambda, listnet: K=1, LambdaLoss (its defaults: NDCGLoss2PPScheme, binary log) and ListNetLoss
          on the 8 rows of data/golden/listwise_rows.jsonl (query, docs, labels; 10 or 11 docs).
  margin_mse: K=1, MarginMSELoss on the first 16 rows of data/golden/margin_rows.jsonl.
  mse: K=1, MSELoss on the bce rows (labels score / 5).
  reranking: CrossEncoderRerankingEvaluator(samples of data/rerank/stsb-dev.jsonl, at_k=10) on the
          K=1 model (predict puts it in eval mode): every metric it returns, keys as ours
          ("eval/map", "eval/mrr@10", "eval/ndcg@10").
"""
import json
import os
import subprocess
import sys
import tempfile

import torch
from safetensors.torch import save_file
from sentence_transformers.cross_encoder import CrossEncoder, losses
from sentence_transformers.cross_encoder.evaluation import CrossEncoderRerankingEvaluator

MODEL = "data/bert-tiny-random"
HIDDEN = 128
HEADS = {1: "data/golden/cross_encoder_head.safetensors", 3: "data/golden/cross_encoder_head3.safetensors"}
FOLDER_SCRIPT = "data/golden/make_cross_encoder_folder.py"
STS_DEV = "data/stsbenchmark/sts-dev.csv"
STS_TRAIN = "data/stsbenchmark/sts-train.csv"
SICK = "data/sick/SICK.txt"
RERANK = "data/rerank/stsb-dev.jsonl"
PREDICT_ROWS = 32
BATCH = 16
TRIPLETS = "data/sick-triplets/train.jsonl"
MARGINS = "data/golden/margin_rows.jsonl"
LISTWISE = "data/golden/listwise_rows.jsonl"
SICK_LABELS = {"ENTAILMENT": 0, "NEUTRAL": 1, "CONTRADICTION": 2}


def make_heads():
    for k, path in HEADS.items():
        torch.manual_seed(0)
        weight = torch.empty(k, HIDDEN, dtype=torch.float32).normal_(mean=0.0, std=0.02)
        bias = torch.zeros(k, dtype=torch.float32)
        save_file({"classifier.weight": weight, "classifier.bias": bias}, path)


def make_folders(tmp):
    folders = {}
    for k, head in HEADS.items():
        folders[k] = os.path.join(tmp, f"cross-encoder-{k}")
        subprocess.run([sys.executable, FOLDER_SCRIPT, MODEL, head, folders[k]], check=True)
    return folders


def load_model(folder):
    model = CrossEncoder(folder, device="cpu")
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    return model


def stsb_rows(path, n):
    """([sentence1, sentence2], score / 5) for the first n rows, as make_sbert_goldens.py reads them."""
    rows = []
    for line in open(path, encoding="utf-8"):
        f = line.rstrip("\n").rstrip("\r").split("\t")
        rows.append(([f[5], f[6]], float(f[4]) / 5.0))
        if len(rows) == n:
            return rows
    return rows


def sick_rows(n):
    """([sentence_A, sentence_B], class id) for the first n rows of SICK.txt (all SemEval sets)."""
    lines = open(SICK, encoding="utf-8").read().splitlines()
    header = lines[0].split("\t")
    a, b = header.index("sentence_A"), header.index("sentence_B")
    label = header.index("entailment_label")
    rows = []
    for line in lines[1:]:
        if not line:
            continue
        f = line.split("\t")
        rows.append(([f[a], f[b]], SICK_LABELS[f[label]]))
        if len(rows) == n:
            return rows
    return rows


def grad_norm(model):
    sq = sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None)
    return sq ** 0.5


def predict(folder, k):
    model = load_model(folder)
    pairs = [r[0] for r in stsb_rows(STS_DEV, PREDICT_ROWS)]
    scores = model.predict(pairs, batch_size=PREDICT_ROWS)
    out = {"data": STS_DEV, "rows": PREDICT_ROWS, "num_labels": k,
           "activation_fn": type(model.activation_fn).__name__,
           "scores": [float(s) for s in scores] if k == 1 else [[float(x) for x in s] for s in scores]}
    print("predict", k, out["activation_fn"], out["scores"][:2], file=sys.stderr)
    return out


def loss_case(folder, name):
    model = load_model(folder)
    model.train()
    if name == "bce":
        rows = stsb_rows(STS_TRAIN, BATCH)
        labels = torch.tensor([r[1] for r in rows])  # float32, as CrossEncoderDataCollator makes it
        fn = losses.BinaryCrossEntropyLoss(model)
    else:
        rows = sick_rows(BATCH)
        labels = torch.tensor([r[1] for r in rows])  # int64 class ids
        fn = losses.CrossEntropyLoss(model)
    inputs = [[r[0][0] for r in rows], [r[0][1] for r in rows]]  # as CrossEncoderTrainer passes them
    value = fn(inputs, labels)
    value.backward()
    out = {"data": STS_TRAIN if name == "bce" else SICK, "format": "stsb" if name == "bce" else "sick",
           "batch_size": BATCH, "num_labels": model.num_labels,
           "labels": [float(x) for x in labels] if name == "bce" else [int(x) for x in labels],
           "value": float(value), "grad_norm": grad_norm(model)}
    print(name, out["value"], out["grad_norm"], file=sys.stderr)
    return out


def jsonl(path, n=None):
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    return rows[:n] if n else rows


def ranking_case(folder, name):
    """Issue 50's ranking and distillation losses on a one-output model, as loss_case."""
    model = load_model(folder)
    model.train()
    if name == "mnrl":
        rows = jsonl(TRIPLETS, BATCH)
        inputs = [[r["anchor"] for r in rows], [r["positive"] for r in rows],
                  [r["negative"] for r in rows]]
        labels = torch.zeros(len(rows))
        fn = losses.MultipleNegativesRankingLoss(model, num_negatives=None)
        data, fmt = TRIPLETS, "jsonl"
    elif name in ("lambda", "listnet"):
        rows = jsonl(LISTWISE)
        inputs = [[r["query"] for r in rows], [r["docs"] for r in rows]]
        labels = [torch.tensor(r["labels"]) for r in rows]
        fn = losses.LambdaLoss(model) if name == "lambda" else losses.ListNetLoss(model)
        data, fmt = LISTWISE, "jsonl"
    elif name == "margin_mse":
        rows = jsonl(MARGINS, BATCH)
        inputs = [[r["anchor"] for r in rows], [r["positive"] for r in rows],
                  [r["negative"] for r in rows]]
        labels = torch.tensor([r["label"] for r in rows])
        fn = losses.MarginMSELoss(model)
        data, fmt = MARGINS, "jsonl"
    else:  # mse
        rows = stsb_rows(STS_TRAIN, BATCH)
        inputs = [[r[0][0] for r in rows], [r[0][1] for r in rows]]
        labels = torch.tensor([r[1] for r in rows])
        fn = losses.MSELoss(model)
        data, fmt = STS_TRAIN, "stsb"
    value = fn(inputs, labels)
    value.backward()
    out = {"data": data, "format": fmt, "rows": len(rows), "num_labels": 1,
           "value": float(value), "grad_norm": grad_norm(model)}
    print(name, out["value"], out["grad_norm"], file=sys.stderr)
    return out


def reranking(folder):
    model = load_model(folder)
    samples = [json.loads(line) for line in open(RERANK, encoding="utf-8")]
    ev = CrossEncoderRerankingEvaluator(samples, at_k=10)
    res = ev(model)
    out = {"eval/" + key: float(v) for key, v in res.items()}
    print("reranking", out, file=sys.stderr)
    return {"data": RERANK, "queries": len(samples), "at_k": 10, "metrics": out}


def main():
    import numpy
    import sentence_transformers
    import sklearn
    import transformers
    versions = {"sentence_transformers": sentence_transformers.__version__,
                "transformers": transformers.__version__, "torch": torch.__version__,
                "scikit_learn": sklearn.__version__, "numpy": numpy.__version__}
    print("versions", versions, file=sys.stderr)
    make_heads()
    with tempfile.TemporaryDirectory() as tmp:
        folders = make_folders(tmp)
        gold = {"versions": versions, "model": MODEL,
                "heads": {str(k): path for k, path in HEADS.items()},
                "predict": {"1": predict(folders[1], 1), "3": predict(folders[3], 3)},
                "bce": loss_case(folders[1], "bce"),
                "ce": loss_case(folders[3], "ce"),
                "reranking": reranking(folders[1])}
        for name in ("mnrl", "lambda", "listnet", "margin_mse", "mse"):
            try:
                gold[name] = ranking_case(folders[1], name)
            except Exception as e:  # one failing case keeps the others
                print("FAILED", name, repr(e), file=sys.stderr)
    path = sys.argv[1] if len(sys.argv) > 1 else "data/golden/cross_encoder_goldens.json"
    with open(path, "w") as f:
        json.dump(gold, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
