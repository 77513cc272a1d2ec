#!/usr/bin/env python3
"""One training step's GPU time by kernel, from two Nsight Compute runs of train_throughput_bench.

ncu (--metrics gpu__time_duration.sum --csv) times every kernel a run launches. Run A takes
--warmup W --steps 1 and run B --warmup W+1 --steps 1, otherwise the same; B launches exactly one
step more than A, so B's total per kernel name minus A's is one step's kernels. Prints the step's
time by category and its 25 longest kernels, and writes them as JSON to --json.
  kernel_profile.py A.csv B.csv [--json FILE]
Kernels run serialized under ncu, so the sum exceeds the step time a graph replay measures (no
overlap, no launch gaps): read it as where the GPU's time goes, not as a step time.
"""
import argparse
import csv
import collections
import json
import re
import sys

# (category, pattern on the kernel's demangled name), first match wins.
CATEGORIES = [
    ("fused dropout+residual+LayerNorm (tunefleet)", r"tunefleet|ForwardKernel|BackwardKernel"),
    ("attention (SDPA)", r"fmha|flash|attention|Attention|efficient"),
    ("matmul (cuBLAS/cuBLASLt)", r"gemm|Gemm|cutlass|xmma|nvjet|sm90_|sm80_|splitK|reduce_kernel<.*cublas"),
    ("AdamW (fused)", r"[Aa]dam|multi_tensor"),
    ("GELU", r"[Gg]elu"),
    ("LayerNorm (ATen)", r"layer_norm|LayerNorm"),
    ("dropout / softmax (ATen)", r"dropout|fused_dropout|softmax|Softmax"),
    ("embedding", r"embedding|indexSelect|index_select|EmbeddingBag|embedding_backward|sort|radix"),
    ("reductions (ATen)", r"reduce_kernel|Reduce"),
    ("casts and copies", r"copy|cast|Copy"),
    ("other elementwise", r"elementwise|vectorized|unrolled"),
]


def totals(path):
    """Kernel name -> (total ns, launches), from ncu's --csv output (units: --print-units base)."""
    out = collections.defaultdict(lambda: [0.0, 0])
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu's own ==PROF== lines are not CSV
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "nsecond")
        scale = {"nsecond": 1, "ns": 1, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6}
        ns = value * scale.get(unit, 1)
        name = row["Kernel Name"]
        out[name][0] += ns
        out[name][1] += 1
    return out


def category(name):
    for label, pattern in CATEGORIES:
        if re.search(pattern, name):
            return label
    return "other"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--json")
    args = p.parse_args()
    a, b = totals(args.a), totals(args.b)
    if not b:
        sys.exit(f"kernel_profile: no gpu__time_duration rows in {args.b}")
    step = {}
    for name, (ns, n) in b.items():
        ns_a, n_a = a.get(name, (0.0, 0))
        if n - n_a > 0:
            step[name] = (ns - ns_a, n - n_a)
    total = sum(ns for ns, _ in step.values())
    launches = sum(n for _, n in step.values())
    by_cat = collections.defaultdict(lambda: [0.0, 0])
    for name, (ns, n) in step.items():
        c = by_cat[category(name)]
        c[0] += ns
        c[1] += n
    print(f"profile: one step, {launches} kernel launches, {total / 1e6:.2f} ms of kernel time "
          "(serialized under ncu)")
    for label, (ns, n) in sorted(by_cat.items(), key=lambda kv: -kv[1][0]):
        print(f"profile:   {ns / 1e6:7.2f} ms {100 * ns / total:5.1f}%  {n:5d} launches  {label}")
    top = sorted(step.items(), key=lambda kv: -kv[1][0])[:25]
    print("profile: longest kernels (ms in the step, launches, name)")
    for name, (ns, n) in top:
        print(f"profile:   {ns / 1e6:7.3f} {n:4d}  {name[:150]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"total_ms": total / 1e6, "launches": launches,
                       "categories": {k: {"ms": v[0] / 1e6, "launches": v[1]} for k, v in by_cat.items()},
                       "kernels": [{"name": k, "ms": v[0] / 1e6, "launches": v[1]} for k, v in top]},
                      f, indent=1)


if __name__ == "__main__":
    main()
