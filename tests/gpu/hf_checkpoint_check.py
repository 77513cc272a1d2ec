#!/usr/bin/env python3
"""Checks tunefleet checkpoints against Hugging Face on a machine that has transformers.

Usage: hf_checkpoint_check.py TRAINER SOURCE_MODEL WORK_DIR SENTENCES_FILE [--as-is]

1. `trainer convert --model SOURCE --output WORK/converted --pooling mean` writes the model in
   tunefleet's layout; transformers' BertModel.from_pretrained loads it with no missing or
   unexpected keys, and its last_hidden_state / pooler_output equal those of the SOURCE model
   loaded by transformers (max abs difference printed; must be <= 1e-5, fp32, CPU).
2. sentence-transformers loads the converted folder (mean pooling) and its embeddings equal
   `trainer encode` on the same folder (<= 1e-5).
With --as-is, SOURCE_MODEL is already a folder tunefleet wrote (e.g. `trainer train`'s
OUTPUT_DIR/model): step 1 is skipped and step 2, with transformers' loading report, runs on it.
Not part of `bazel test` (needs transformers): run by hand or on the GPU host (docs/GPU_HOSTS.md).
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import transformers

TOL = 1e-5


def hf_outputs(model_dir, sentences):
    tok = transformers.BertTokenizerFast.from_pretrained(model_dir)
    model, info = transformers.BertModel.from_pretrained(model_dir, output_loading_info=True)
    model.eval()
    batch = tok(sentences, padding=True, truncation=True, max_length=128, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch)
    mask = batch["attention_mask"].unsqueeze(-1).float()
    mean = (out.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return out.last_hidden_state, out.pooler_output, mean, info


def main():
    trainer, source, work, sentences_file = sys.argv[1:5]
    as_is = "--as-is" in sys.argv[5:]
    os.makedirs(work, exist_ok=True)
    sentences = [l.rstrip("\n") for l in open(sentences_file, encoding="utf-8")][:64]
    converted = source if as_is else os.path.join(work, "converted")
    if not as_is:
        subprocess.run([trainer, "convert", "--model", source, "--output", converted,
                        "--pooling", "mean"], check=True)
    failures = []
    h0, p0, m0, _ = hf_outputs(source, sentences)
    h1, p1, m1, info = hf_outputs(converted, sentences)
    for key in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        if info.get(key):
            failures.append(f"transformers reports {key}: {info[key]}")
    d_hidden = (h0 - h1).abs().max().item()
    d_pooler = (p0 - p1).abs().max().item()
    print(f"transformers {transformers.__version__}: converted vs source: last_hidden_state max "
          f"abs diff {d_hidden:.3g}, pooler_output {d_pooler:.3g}")
    if d_hidden > TOL or d_pooler > TOL:
        failures.append("outputs differ beyond 1e-5")

    with open(os.path.join(work, "sentences.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(sentences) + "\n")
    out = os.path.join(work, "embeddings.jsonl")
    subprocess.run([trainer, "encode", "--model", converted, "--input",
                    os.path.join(work, "sentences.txt"), "--output", out], check=True)
    ours = np.array([json.loads(l)["embedding"] for l in open(out)])
    d_ours_hf = np.abs(ours - m1.numpy()).max()
    print(f"trainer encode vs transformers mean pooling: max abs diff {d_ours_hf:.3g}")
    if d_ours_hf > TOL:
        failures.append("trainer encode differs from transformers")
    try:
        import sentence_transformers
        st = sentence_transformers.SentenceTransformer(converted, device="cpu")
        emb = st.encode(sentences, convert_to_numpy=True, batch_size=64)
        d_st = np.abs(ours - emb).max()
        print(f"sentence-transformers {sentence_transformers.__version__} vs trainer encode: "
              f"max abs diff {d_st:.3g}")
        if d_st > TOL:
            failures.append("sentence-transformers differs from trainer encode")
    except ImportError:
        print("sentence-transformers not installed: skipped")
    for f in failures:
        print("FAIL:", f)
    print("hf_checkpoint_check:", "FAILED" if failures else "OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
