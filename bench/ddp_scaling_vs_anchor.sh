#!/usr/bin/env bash
# Data-parallel scaling of tunefleet against the PyTorch DDP anchor, in one run on one host
# (issue 5): for each batch size per GPU, shared/bench/pytorch_anchor.py on 1 GPU and under
# torchrun on N GPUs (DistributedDataParallel), and train_throughput_bench --variant fused and
# graph on 1 GPU and under torchrun --no-python on N GPUs (trainer/distributed/grad_sync.h: bucketed
# all-reduce overlapped with backward). Scaling efficiency = N-GPU samples/s / (N x 1-GPU).
#   bench/ddp_scaling_vs_anchor.sh ANCHOR.py BENCH_BINARY [MODEL] [BATCH...]
# GPUS (default 2) ranks; NCCL_NVLS_ENABLE defaults to 0. JSON lines also go to
# $OUT/ddp_scaling.jsonl when OUT is set.
set -uo pipefail
# shellcheck source=bench/gpu/anchor_lib.sh
source "$(dirname "$(readlink -f "$0")")/gpu/anchor_lib.sh"
anchor_args "$@"
GPUS=${GPUS:-2}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
LOG=$(mktemp)
RAW=$(mktemp)
trap 'rm -f "$LOG" "$RAW"' EXIT
RUN=(python3 -m torch.distributed.run --standalone --nproc_per_node="$GPUS")

for b in "${BATCHES[@]}"; do
  for n in 1 "$GPUS"; do
    if [ "$n" -eq 1 ]; then a=(python3 "$ANCHOR"); t=("$BENCH"); else a=("${RUN[@]}" "$ANCHOR"); t=("${RUN[@]}" --no-python "$BENCH"); fi
    "${a[@]}" --model "$MODEL" --precision bf16 --batch "$b" 2>/dev/null | anchor_rows ddp |
      tee -a "$LOG"
    for v in fused graph; do
      "${t[@]}" --model "$MODEL" --precision bf16 --batch "$b" --variant "$v" > "$RAW" 2>&1
      grep '^{' "$RAW" | tee -a "$LOG"
      grep -q '^{' "$RAW" || { echo "$v, $n GPU(s), batch $b failed:"; grep -iE "error" "$RAW" | head -3; }
    done
  done
done
[ -n "${OUT:-}" ] && cp "$LOG" "$OUT/ddp_scaling.jsonl"
python3 - "$LOG" "$GPUS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
n = int(sys.argv[2])
key = lambda r: (r["batch_per_gpu"], r["impl"], r["variant"])
one = {key(r): r["samples_per_s"] for r in rows if r["world"] == 1}
many = {key(r): r["samples_per_s"] for r in rows if r["world"] == n}
anchor_many = {k[0]: v for k, v in many.items() if k[1] == "anchor"}
print(f"| batch/GPU | impl | variant | 1 GPU samples/s | {n} GPUs samples/s | scaling efficiency | x anchor on {n} GPUs |")
print("|---|---|---|---|---|---|---|")
for k in sorted(set(one) | set(many)):
    s1, sn = one.get(k), many.get(k)
    eff = f"{sn / (n * s1):.1%}" if s1 and sn else "-"
    ratio = f"{sn / anchor_many[k[0]]:.2f}" if sn and k[0] in anchor_many else "-"
    print(f"| {k[0]} | {k[1]} | {k[2]} | {s1 or 0:,.0f} | {sn or 0:,.0f} | {eff} | {ratio} |")
PY
