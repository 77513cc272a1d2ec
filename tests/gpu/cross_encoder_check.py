#!/usr/bin/env python3
"""Checks a cross-encoder folder that tunefleet wrote against Hugging Face (issue 50, acceptance 2).

Usage: cross_encoder_check.py MODEL_DIR PAIRS_TSV PREDICTED_JSONL

MODEL_DIR is `trainer train`'s OUTPUT_DIR/model for model.kind: cross_encoder; PAIRS_TSV holds one
tab-separated pair a line; PREDICTED_JSONL is `trainer predict --model MODEL_DIR < PAIRS_TSV`.
1. transformers' AutoModelForSequenceClassification loads MODEL_DIR with no missing, unexpected or
   mismatched keys, as the architecture config.json names; sigmoid of its logits (fp32, CPU, eval
   mode, the pairs padded together) equals `trainer predict`'s scores within 1e-5.
2. sentence-transformers' CrossEncoder loads MODEL_DIR (its activation from config.json) and its
   predict() equals the same scores within 1e-5.
Prints the largest differences; exits 1 when a check fails. Needs transformers and
sentence-transformers: run it on the GPU host (docs/GPU_HOSTS.md), not in `bazel test`.
"""
import json
import sys

import torch
import transformers
from sentence_transformers.cross_encoder import CrossEncoder

TOL = 1e-5


def main():
    model_dir, pairs_path, predicted_path = sys.argv[1:4]
    pairs = [line.rstrip("\n").split("\t") for line in open(pairs_path, encoding="utf-8") if line.strip()]
    ours = [json.loads(line)["score"] for line in open(predicted_path)]
    assert len(ours) == len(pairs), (len(ours), len(pairs))
    ours = torch.tensor(ours, dtype=torch.float32)
    failures = []

    config = transformers.AutoConfig.from_pretrained(model_dir)
    model, info = transformers.AutoModelForSequenceClassification.from_pretrained(
        model_dir, output_loading_info=True)
    print("transformers:", type(model).__name__, "architectures", config.architectures,
          "num_labels", config.num_labels, "loading info", info)
    if any(info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys")):
        failures.append("transformers reported keys: %s" % info)
    tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    model.eval()
    with torch.no_grad():
        batch = tok([p[0] for p in pairs], [p[1] for p in pairs], padding=True, truncation=True,
                    return_tensors="pt")
        hf = torch.sigmoid(model(**batch).logits.view(-1).float())
    d = float((hf - ours).abs().max())
    print("AutoModelForSequenceClassification vs trainer predict: max |diff| %.3g" % d)
    if d > TOL:
        failures.append("transformers' scores differ by %.3g" % d)

    ce = CrossEncoder(model_dir, device="cpu")
    st = torch.tensor(ce.predict(pairs, batch_size=32), dtype=torch.float32)
    d = float((st - ours).abs().max())
    print("CrossEncoder (%s) vs trainer predict: max |diff| %.3g" % (type(ce.activation_fn).__name__, d))
    if d > TOL:
        failures.append("CrossEncoder's scores differ by %.3g" % d)
    for f in failures:
        print("FAIL:", f)
    print("cross-encoder check:", "FAILED" if failures else "passed", "on", len(pairs), "pairs")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
