#!/usr/bin/env python3
"""Checks that Hugging Face loads what `trainer train` and `trainer convert` save, for every model
family (issue 34), on a machine with transformers and sentence-transformers (the GPU host; CPU,
fp32).

Usage: family_check.py TRAINER WORK_DIR [FOLDER...]
FOLDER defaults to data/golden/families/{roberta-klue,xlm-r,mpnet,distilbert}. For each folder:
  1. `trainer train` (STS-B cosine loss, 20 steps, batch 16, fp32, CPU) from the folder, saving
     WORK/NAME/train/model in Sentence-Transformers layout; `trainer convert` of the folder to
     WORK/NAME/convert.
  2. For each saved folder: transformers' AutoModel loads it with no missing, unexpected or
     mismatched keys, as the family's class (RobertaModel, XLMRobertaModel, MPNetModel);
     AutoTokenizer gives the ids of `trainer tokenize --model`; sentence-transformers loads it and
     its embeddings of the STS-B dev sentences equal `trainer encode`'s within 1e-4, as does
     transformers' mean pooling.
Prints one line per check and "family_check: OK" or "FAILED"; exits 1 on a failure.
Not part of `bazel test` (needs transformers): run by hand or on the GPU host (docs/GPU_HOSTS.md).
"""
import json
import os
import subprocess
import sys

import numpy as np
import sentence_transformers
import torch
import transformers

TOL = 1e-4
FOLDERS = ["data/golden/families/roberta-klue", "data/golden/families/xlm-r",
           "data/golden/families/mpnet", "data/golden/families/distilbert"]


def sentences():
    rows = [l.rstrip("\n").split("\t") for l in open("data/stsbenchmark/sts-dev.csv",
                                                      encoding="utf-8")]
    texts = [r[5] for r in rows[:48]] + [
        "오늘은 모델 학습을 시작합니다.", "Café, naïve, Ångström", "中文字符和日本語のテキスト"]
    return texts


def train(trainer, folder, out):
    config = os.path.join(out, "train.yaml")
    os.makedirs(out, exist_ok=True)
    with open(config, "w") as f:
        f.write(f"""model: {{path: {folder}, pooling: mean, max_seq_len: 128, dropout: 0.1}}
task: {{type: sts, train: data/stsbenchmark/sts-train.csv, format: stsb}}
train: {{epochs: 0, max_steps: 20, batch_size: 16, lr: 1.0e-4, precision: fp32, devices: 1}}
output: {{dir: {out}/run, save: last, checkpoint: false}}
""")
    subprocess.run([trainer, "train", "--config", config, "train.log_every_steps=10"], check=True,
                   env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    return os.path.join(out, "run", "model")


def check(trainer, saved, texts, failures):
    name = saved
    model, info = transformers.AutoModel.from_pretrained(saved, output_loading_info=True)
    model.eval()
    for key in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        if info.get(key):
            failures.append(f"{name}: transformers reports {key}: {info[key]}")
    tok = transformers.AutoTokenizer.from_pretrained(saved)
    batch = tok(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
    with torch.no_grad():
        hidden = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])[0]
    mask = batch["attention_mask"].unsqueeze(-1).float()
    hf_mean = ((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)).numpy()

    text_file = os.path.join(os.path.dirname(saved), "texts.txt")
    with open(text_file, "w", encoding="utf-8") as f:
        f.write("\n".join(texts) + "\n")
    ids = subprocess.run([trainer, "tokenize", "--model", saved, "--max_len", "128"],
                         input="\n".join(texts) + "\n", capture_output=True, text=True,
                         check=True).stdout.splitlines()
    ours_ids = [json.loads(l)["ids"] for l in ids]
    hf_ids = [tok(t, truncation=True, max_length=128)["input_ids"] for t in texts]
    same = sum(a == b for a, b in zip(ours_ids, hf_ids))
    if same != len(texts):
        failures.append(f"{name}: trainer tokenize differs from AutoTokenizer on "
                        f"{len(texts) - same} of {len(texts)} texts")
    out = os.path.join(os.path.dirname(saved), "embeddings.jsonl")
    subprocess.run([trainer, "encode", "--model", saved, "--input", text_file, "--output", out,
                    "--device", "cpu"], check=True)
    ours = np.array([json.loads(l)["embedding"] for l in open(out)])
    st = sentence_transformers.SentenceTransformer(saved, device="cpu")
    st_emb = st.encode(texts, convert_to_numpy=True, batch_size=64)
    d_hf = np.abs(ours - hf_mean).max()
    d_st = np.abs(ours - st_emb).max()
    print(f"{name}: {type(model).__name__}, ids {same}/{len(texts)} equal, trainer encode vs "
          f"transformers mean pooling max abs {d_hf:.3g}, vs sentence-transformers {d_st:.3g}")
    if d_hf > TOL or d_st > TOL:
        failures.append(f"{name}: embeddings differ beyond {TOL}")


def main():
    trainer, work = sys.argv[1:3]
    folders = sys.argv[3:] or FOLDERS
    texts = sentences()
    failures = []
    print(f"transformers {transformers.__version__}, sentence-transformers "
          f"{sentence_transformers.__version__}")
    for folder in folders:
        name = os.path.basename(folder.rstrip("/"))
        out = os.path.join(work, name)
        saved = train(trainer, folder, out)
        check(trainer, saved, texts, failures)
        converted = os.path.join(out, "convert")
        subprocess.run([trainer, "convert", "--model", folder, "--output", converted,
                        "--pooling", "mean"], check=True)
        check(trainer, converted, texts, failures)
    for f in failures:
        print("FAIL:", f)
    print("family_check:", "FAILED" if failures else "OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
