#!/usr/bin/env bash
# Issue 7, run 1 (prepared; needs a host of 4 or 8 GPUs, nvidia-h200-x4 or -x8): BERT-base,
# bf16, seq 128, samples/s on 1, 2, 4 and 8 GPUs (as many as the host has) for the PyTorch DDP
# anchor (`torchrun pytorch_anchor.py`) and train_throughput_bench (graph step at batch 32,
# fused and graph at 128), in one call; scaling efficiency = N-GPU / (N x 1-GPU).
# Run from the repository root with the anchor in .carry/bench/ and `.carry` carried.
source bench/ddp_calls/lib.sh
G=$(nvidia-smi -L | wc -l); echo "$G GPU(s): $(nvidia-smi -L | head -1)"
L="$O/scaling.jsonl"
tag() { grep '^{' | sed "s/^{/{\"cfg\": \"$1\", /" >> "$L"; }
for n in 1 2 4 8; do
  [ "$n" -le "$G" ] || continue
  if [ "$n" -eq 1 ]; then a=(python3); t=(); else
    a=(python3 -m torch.distributed.run --standalone --nproc_per_node=$n)
    t=(python3 -m torch.distributed.run --standalone --nproc_per_node=$n --no-python); fi
  for bv in "32 graph" "128 fused" "128 graph"; do
    read -r b v <<< "$bv"
    [ "$v" = fused ] && "${a[@]}" .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null |
      sed 's/^{/{"impl": "anchor", "variant": "ddp", /' | tag anchor
    [ "$b" = 32 ] && "${a[@]}" .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null |
      sed 's/^{/{"impl": "anchor", "variant": "ddp", /' | tag anchor
    "${t[@]}" $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v 2>"$O/err.log" | tag tunefleet
  done
  echo "$n GPU(s) done at $SECONDS s"
done
python3 - "$L" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| batch/GPU | impl | " + " | ".join(f"{n} GPU(s)" for n in (1, 2, 4, 8)) + " | efficiency at the most GPUs |")
print("|---|---|---|---|---|---|---|")
for b in (32, 128):
    for impl, variant in (("anchor", "ddp"), ("tunefleet", "fused"), ("tunefleet", "graph")):
        by = {r["world"]: r["samples_per_s"] for r in rows
              if r["batch_per_gpu"] == b and r["impl"] == impl and r["variant"] == variant}
        if not by: continue
        top = max(by); eff = f"{by[top] / (top * by[1]):.1%}" if 1 in by else "-"
        print(f"| {b} | {impl} {variant} | " + " | ".join(f"{by[n]:,.0f}" if n in by else "-" for n in (1, 2, 4, 8)) + f" | {eff} ({top} GPUs) |")
PY
