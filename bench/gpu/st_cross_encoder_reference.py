#!/usr/bin/env python3
"""sentence-transformers' cross-encoder training speed for bench/gpu/run.sh's crossenc suite (issue
50): CrossEncoder on a BERT-base-sized random encoder (/tmp/bert-base-random, made by run.sh's
bert_base_random) with a new one-output head, BinaryCrossEntropyLoss on STS-B's training pairs
(label score / 5) in file order, bf16 autocast, fused AdamW, in a plain loop (the loss's own
tokenization included, as CrossEncoderTrainer's step runs it): WARMUP steps, then STEPS timed.
Prints one JSON line per batch size: samples/s. Run on the GPU host from the repository root:
  python3 bench/gpu/st_cross_encoder_reference.py [BATCH ...]   (default 32 128)
"""
import json
import sys
import time

import torch
from sentence_transformers.cross_encoder import CrossEncoder, losses

WARMUP, STEPS = 5, 30
rows = [l.rstrip("\n").split("\t") for l in open("data/stsbenchmark/sts-train.csv", encoding="utf-8")]
pairs = [(r[5], r[6], float(r[4]) / 5.0) for r in rows]


def run(batch):
    torch.manual_seed(0)
    model = CrossEncoder("/tmp/bert-base-random", num_labels=1, max_length=128, device="cuda")
    model.train()
    fn = losses.BinaryCrossEntropyLoss(model)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=True)
    t = None
    for step in range(WARMUP + STEPS):
        if step == WARMUP:
            torch.cuda.synchronize()
            t = time.time()
        rs = [pairs[(step * batch + i) % len(pairs)] for i in range(batch)]
        labels = torch.tensor([r[2] for r in rs], device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fn([[r[0] for r in rs], [r[1] for r in rs]], labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    s = time.time() - t
    print(json.dumps({"impl": "sentence-transformers CrossEncoder + BinaryCrossEntropyLoss, plain loop",
                      "batch": batch, "steps": STEPS, "samples_per_s": round(STEPS * batch / s, 1),
                      "loss": round(loss.item(), 5)}))
    # Where the time goes: the same steps on batches tokenized beforehand (the model's forward,
    # BCE and backward, AdamW), so the difference is the loss's own tokenization per step.
    fixed = []
    for step in range(WARMUP + STEPS):
        rs = [pairs[(step * batch + i) % len(pairs)] for i in range(batch)]
        tok = model.tokenizer([[r[0], r[1]] for r in rs], padding=True, truncation=True,
                              return_tensors="pt").to("cuda")
        fixed.append((tok, torch.tensor([r[2] for r in rs], device="cuda")))
    bce = torch.nn.BCEWithLogitsLoss()
    for step, (tok, labels) in enumerate(fixed):
        if step == WARMUP:
            torch.cuda.synchronize()
            t = time.time()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = bce(model.model(**tok).logits.view(-1).float(), labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    s = time.time() - t
    print(json.dumps({"impl": "the same model, pre-tokenized batches (no tokenization in the step)",
                      "batch": batch, "steps": STEPS, "samples_per_s": round(STEPS * batch / s, 1)}))


if __name__ == "__main__":
    import sentence_transformers
    print("sentence-transformers", sentence_transformers.__version__, file=sys.stderr)
    for b in [int(x) for x in sys.argv[1:]] or [32, 128]:
        run(b)
