#!/usr/bin/env python3
"""Checks the cross-encoders tunefleet writes for every model family against Hugging Face
(issue 50, point 1), on a machine with transformers and sentence-transformers (the GPU host;
CPU, fp32).

Usage: cross_encoder_families_check.py TRAINER WORK_DIR [FOLDER...]
FOLDER defaults to data/golden/families/{roberta-klue,xlm-r,mpnet,distilbert} (run from the
repository root). For each folder:
  1. `trainer train` of 2 steps of task.loss bce with model.kind: cross_encoder (a new head of
     one label) from the folder, saving WORK_DIR/NAME/run/model; `trainer predict` of 32 STS-B dev
     pairs with it.
  2. transformers' AutoModelForSequenceClassification loads the saved folder as the family's class
     (RobertaForSequenceClassification, XLMRobertaForSequenceClassification,
     MPNetForSequenceClassification, DistilBertForSequenceClassification) with no missing,
     unexpected or mismatched keys; its logits (eval mode, the pairs padded together by
     AutoTokenizer; token types left out where the model has at most one, as tunefleet takes
     them as zeros) equal the logits of `trainer predict`'s scores (the logit of the sigmoid)
     within 1e-5, and its sigmoid equals the scores within 1e-5.
  3. sentence-transformers' CrossEncoder loads it (its activation from config.json) and its
     predict() equals the scores within 1e-5; skipped, saying so, where its tokenizer gives the
     second text token type 1 and the model has one token type (RoBERTa under a BertTokenizer:
     transformers' embedding has no row for it).
Prints one line per check and "cross_encoder_families_check: OK" or "FAILED"; exits 1 on a
failure. Not part of `bazel test` (needs transformers): run by hand or on the GPU host
(docs/GPU_HOSTS.md).
"""
import json
import os
import subprocess
import sys

import torch
import transformers
from sentence_transformers.cross_encoder import CrossEncoder

TOL = 1e-5
FOLDERS = ["data/golden/families/roberta-klue", "data/golden/families/xlm-r",
           "data/golden/families/mpnet", "data/golden/families/distilbert"]
ARCHITECTURES = {"roberta": "RobertaForSequenceClassification",
                 "xlm-roberta": "XLMRobertaForSequenceClassification",
                 "mpnet": "MPNetForSequenceClassification",
                 "distilbert": "DistilBertForSequenceClassification"}
CPU = dict(os.environ, CUDA_VISIBLE_DEVICES="")


def pairs():
    rows = [l.rstrip("\n").split("\t") for l in open("data/stsbenchmark/sts-dev.csv",
                                                      encoding="utf-8")]
    return [(r[5], r[6]) for r in rows[:32]]


def train(trainer, folder, out):
    os.makedirs(out, exist_ok=True)
    config = os.path.join(out, "train.yaml")
    with open(config, "w") as f:
        f.write(f"""model: {{path: {folder}, kind: cross_encoder, num_labels: 1, max_seq_len: 128, dropout: 0.1}}
task: {{loss: bce, train: data/stsbenchmark/sts-train.csv, format: stsb}}
train: {{epochs: 0, max_steps: 2, batch_size: 8, lr: 1.0e-4, precision: fp32, devices: 1}}
output: {{dir: {out}/run, save: last, checkpoint: false}}
""")
    subprocess.run([trainer, "train", "--config", config], check=True, env=CPU)
    return os.path.join(out, "run", "model")


def predict(trainer, model_dir, texts, out):
    tsv = os.path.join(out, "pairs.tsv")
    with open(tsv, "w", encoding="utf-8", newline="\n") as f:
        for a, b in texts:
            f.write(f"{a}\t{b}\n")
    with open(tsv, encoding="utf-8") as stdin:
        done = subprocess.run([trainer, "predict", "--model", model_dir, "--device", "cpu"],
                              stdin=stdin, capture_output=True, text=True, check=True, env=CPU)
    return torch.tensor([json.loads(l)["score"] for l in done.stdout.splitlines() if l.strip()],
                        dtype=torch.float64)


def check(name, saved, texts, ours, failures):
    def report(what, d):
        ok = d <= TOL
        print(f"{name}: {what}: max |diff| {d:.3g}", "" if ok else "FAIL")
        if not ok:
            failures.append(f"{name}: {what} differs by {d:.3g}")

    config = json.load(open(os.path.join(saved, "config.json")))
    want_arch = ARCHITECTURES[config["model_type"]]
    model, info = transformers.AutoModelForSequenceClassification.from_pretrained(
        saved, output_loading_info=True, torch_dtype=torch.float32)
    model.eval()
    print(f"{name}: transformers loads {type(model).__name__}, loading info {info}")
    if type(model).__name__ != want_arch or config["architectures"] != [want_arch]:
        failures.append(f"{name}: {type(model).__name__}, config.json {config['architectures']}, "
                        f"want {want_arch}")
    for key in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        if info.get(key):
            failures.append(f"{name}: transformers' {key}: {info[key]}")
    tok = transformers.AutoTokenizer.from_pretrained(saved)
    # A model of at most one token type (RoBERTa under a BertTokenizer, as klue/roberta-base; MPNet
    # and DistilBERT have no token types) takes the pair's token types as zeros, as tunefleet does.
    one_type = config.get("type_vocab_size", 0) <= 1
    with torch.no_grad():
        batch = tok([a for a, _ in texts], [b for _, b in texts], padding=True, truncation=True,
                    max_length=128, return_tensors="pt")
        second_type = "token_type_ids" in batch and bool((batch["token_type_ids"] > 0).any())
        if one_type:
            batch.pop("token_type_ids", None)
        logits = model(**batch).logits.double().view(-1)
    # The logit behind each score (sigmoid^-1): exact to ~1e-7 where the score is not near 0 or 1.
    our_logits = torch.log(ours) - torch.log1p(-ours)
    report("AutoModelForSequenceClassification logits vs trainer predict", float(
        (logits - our_logits).abs().max()))
    report("sigmoid of its logits vs trainer predict's scores", float(
        (torch.sigmoid(logits) - ours).abs().max()))
    if one_type and second_type:
        print(f"{name}: CrossEncoder skipped: it passes the tokenizer's token type 1, which a "
              f"model of type_vocab_size {config.get('type_vocab_size')} has no embedding for")
        return
    ce = CrossEncoder(saved, device="cpu")
    st = torch.tensor(ce.predict(list(texts), batch_size=32), dtype=torch.float64)
    report(f"CrossEncoder ({type(ce.activation_fn).__name__}) vs trainer predict",
           float((st - ours).abs().max()))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    trainer, work = sys.argv[1:3]
    folders = sys.argv[3:] or FOLDERS
    texts = pairs()
    failures = []
    for folder in folders:
        name = os.path.basename(os.path.normpath(folder))
        out = os.path.join(work, name)
        saved = train(trainer, folder, out)
        ours = predict(trainer, saved, texts, out)
        if len(ours) != len(texts) or not all(0 < float(s) < 1 for s in ours):
            failures.append(f"{name}: trainer predict gave {len(ours)} scores: {ours.tolist()}")
            continue
        check(name, saved, texts, ours, failures)
    for f in failures:
        print("FAIL:", f)
    print("cross_encoder_families_check:", "FAILED" if failures else "OK")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
