#!/usr/bin/env bash
# Training throughput of tunefleet against the PyTorch anchor, in one run on one GPU (issue 4):
# for each batch size, shared/bench/pytorch_anchor.py (Hugging Face BertForSequenceClassification,
# fused AdamW, bf16 autocast; eager, and again with --compile) and train_throughput_bench with --variant eager,
# fused and graph (and graph with ATen's dropout + add + LayerNorm, and with three separate QKV GEMMs); the same model shape, sequence length, precision and optimizer. Prints each
# JSON line, then a table with each variant's samples/s as a ratio of the anchor's.
#   bench/train_throughput_vs_anchor.sh ANCHOR.py BENCH_BINARY [MODEL] [BATCH...]
# MODEL defaults to bert-base, BATCH to "32 128". Needs a GPU, python3 with torch and
# transformers. Output lines also go to $OUT/throughput.jsonl when OUT is set.
set -uo pipefail
# shellcheck source=bench/gpu/anchor_lib.sh
source "$(dirname "$(readlink -f "$0")")/gpu/anchor_lib.sh"
anchor_args "$@"
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT

for b in "${BATCHES[@]}"; do
  python3 "$ANCHOR" --model "$MODEL" --precision bf16 --batch "$b" | anchor_rows eager | tee -a "$LOG"
  python3 "$ANCHOR" --model "$MODEL" --precision bf16 --batch "$b" --compile | anchor_rows compile |
    tee -a "$LOG"
  for v in eager fused graph; do
    "$BENCH" --model "$MODEL" --precision bf16 --batch "$b" --variant "$v" | tee -a "$LOG"
  done
  # ATen's dropout + add + LayerNorm instead of trainer/model/fused_norm.h's kernels, for comparison.
  "$BENCH" --model "$MODEL" --precision bf16 --batch "$b" --variant graph --kernels aten |
    tee -a "$LOG"
  # The query/key/value projections as transformers runs them (three GEMMs), for comparison.
  "$BENCH" --model "$MODEL" --precision bf16 --batch "$b" --variant graph --qkv separate |
    tee -a "$LOG"
done
[ -n "${OUT:-}" ] && cp "$LOG" "$OUT/throughput.jsonl"
python3 - "$LOG" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def anchors(variant):
    return {r["batch_per_gpu"]: r["samples_per_s"] for r in rows
            if r["impl"] == "anchor" and r["variant"] == variant}
anchor, compiled = anchors("eager"), anchors("compile")
print("| batch | impl | variant | kernels | qkv | samples/s | x anchor | x torch.compile | step ms | peak GiB |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    b = r["batch_per_gpu"]
    ratio = r["samples_per_s"] / anchor[b] if b in anchor else float("nan")
    vs_compile = r["samples_per_s"] / compiled[b] if b in compiled else float("nan")
    step = r.get("step_ms", 1000 * b / r["samples_per_s"])
    print(f"| {b} | {r['impl']} | {r['variant']} | {r.get('kernels', 'aten')} | "
          f"{r.get('qkv', 'separate')} | "
          f"{r['samples_per_s']:,.0f} | {ratio:.2f} | {vs_compile:.2f} | "
          f"{step:.2f} | {r['peak_mem_gib']} |")
PY
