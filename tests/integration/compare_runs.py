#!/usr/bin/env python3
"""Compares two `trainer train` output folders: compare_runs.py RUN_A RUN_B TOL [--expect-differ]

Every metrics.jsonl line (same steps) must agree within TOL relative in train/loss,
train/grad_norm and every eval/ value but eval/spearman, and every tensor of model/model.safetensors within TOL
(relative to the tensor's largest magnitude, at least 1). Prints the largest differences.
With --expect-differ the losses must differ by more than TOL instead (a check that can fail).
eval/spearman ranks the predictions: two pairs whose cosines lie within float noise of each
other (identical sentences score 1.0 or 0.99999994) swap ranks, which moves it by steps of about
1e-5 whatever TOL; it must agree within RANK_TOL (1e-4) absolute instead.
Reads safetensors with numpy alone (8-byte header length, JSON header, raw little-endian data).
"""
import json
import struct
import sys

import numpy as np

RANK_TOL = 1e-4
DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[b:end], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
    return out


def metrics(run):
    return [json.loads(l) for l in open(f"{run}/metrics.jsonl")]


def main():
    a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    expect_differ = "--expect-differ" in sys.argv[4:]
    ma, mb = metrics(a), metrics(b)
    if [x["step"] for x in ma] != [x["step"] for x in mb]:
        print(f"FAIL: steps differ: {[x['step'] for x in ma]} vs {[x['step'] for x in mb]}")
        return 1
    worst = {}
    for x, y in zip(ma, mb):
        for k in x:
            if k in ("train/loss", "train/grad_norm") or k.startswith("eval/"):
                d = abs(x[k] - y[k])
                if k != "eval/spearman":
                    d /= max(abs(x[k]), 1e-12)
                worst[k] = max(worst.get(k, 0.0), d)
    print("metrics, largest relative difference (eval/spearman: absolute):",
          ", ".join(f"{k} {v:.3g}" for k, v in sorted(worst.items())))
    if expect_differ:
        ok = worst["train/loss"] > tol
        print("differ as expected" if ok else "FAIL: the runs agree but should not")
        return 0 if ok else 1
    failures = [f"{k} beyond {tol}" for k, v in worst.items() if v > tol and k != "eval/spearman"]
    if worst.get("eval/spearman", 0.0) > RANK_TOL:
        failures.append(f"eval/spearman beyond {RANK_TOL} absolute")
    wa = read_safetensors(f"{a}/model/model.safetensors")
    wb = read_safetensors(f"{b}/model/model.safetensors")
    if sorted(wa) != sorted(wb):
        failures.append("the models hold different tensors")
    wmax = 0.0
    for k in wa:
        if k in wb:
            d = float(np.abs(wa[k].astype(np.float64) - wb[k]).max()) / max(1.0, float(np.abs(wa[k]).max()))
            wmax = max(wmax, d)
    print(f"weights, largest relative difference: {wmax:.3g} over {len(wa)} tensors")
    if wmax > tol:
        failures.append(f"weights beyond {tol}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
