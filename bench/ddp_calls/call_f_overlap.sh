#!/usr/bin/env bash
# Issue 5, next step (prepared in stop 11, not yet run): does the gradient all-reduce overlap
# backward at all? 2 GPUs, BERT-base bf16, graph step at batch 32 and fused step at batch 128:
# default, --no_overlap (every bucket after backward), CUDA_DEVICE_MAX_CONNECTIONS=1 (one
# hardware queue, so a communication kernel launched before a compute kernel is scheduled first,
# as Megatron-LM sets it), --optimizer_per_bucket
# (each bucket's parameters stepped as soon as its mean arrives, hiding the last bucket, the word
# embeddings, behind the other buckets' AdamW), NCCL's CTA efficiency policy (fewest CTAs that
# keep its speed, for overlap) and at most 4 or 8 CTAs; the anchor in the same call.
# If --no_overlap costs no more than the default, the overlap hides nothing and the ~2 ms a step
# that 2 GPUs add (BENCHMARKS, stop 11) is the all-reduce itself. The fused runs time their
# phases (--phases): a longer backward on 2 GPUs is contention, a "reduce" phase is exposed
# communication.
source bench/ddp_calls/lib.sh
RUN=(python3 -m torch.distributed.run --standalone --nproc_per_node=2)
L="$O/overlap.jsonl"
tag() { sed "s/^{/{\"cfg\": \"$1\", /" | grep '^{' >> "$L"; }
# One batch size per call (a call is at most 10 minutes): "32 graph" or "128 fused" (default both).
STEPS=("$@"); [ ${#STEPS[@]} -eq 0 ] && STEPS=("32 graph" "128 fused")
for bv in "${STEPS[@]}"; do
  read -r b v <<< "$bv"
  P=(); [ "$v" = fused ] && P=(--phases)  # CUDA events: forward, backward, reduce, optimizer
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | sed 's/^{/{"impl": "anchor", "variant": "ddp", /' | tag a
  "${RUN[@]}" .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | sed 's/^{/{"impl": "anchor", "variant": "ddp", /' | tag a
  $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v "${P[@]}" 2>/dev/null | tag base
  for cfg in "base" "--no_overlap" "CUDA_DEVICE_MAX_CONNECTIONS=1" "--optimizer_per_bucket" \
             "NCCL_CTA_POLICY=1" "NCCL_MAX_CTAS=4" "NCCL_MAX_CTAS=8"; do
    envs=(); flags=()
    for w in $cfg; do case $w in base) ;; --*) flags+=("$w") ;; *) envs+=("$w") ;; esac; done
    env "${envs[@]}" "${RUN[@]}" --no-python $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v "${P[@]}" "${flags[@]}" 2>"$O/err.log" | tag "$cfg"
  done
  $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v "${P[@]}" 2>/dev/null | tag base
done
python3 - "$L" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for b in sorted({r["batch_per_gpu"] for r in rows}):
    R = [r for r in rows if r["batch_per_gpu"] == b]
    a1 = [r["samples_per_s"] for r in R if r["impl"] == "anchor" and r["world"] == 1]
    a2 = [r["samples_per_s"] for r in R if r["impl"] == "anchor" and r["world"] == 2]
    print(f"batch {b}: anchor {a1} -> {a2}: {a2[0]/(2*a1[0]):.1%}" if a1 and a2 else f"batch {b}: anchor missing")
    o1 = [r["samples_per_s"] for r in R if r["impl"] != "anchor" and r["world"] == 1]
    for r in R:
        if r["impl"] != "anchor" and r["world"] == 2:
            m = sum(o1) / len(o1)
            print(f"  {r['variant']:6s} {r['cfg']:55s} 1 GPU {o1}  2 GPUs {r['samples_per_s']:8.0f} ({r['step_ms']:.2f} ms)  eff {r['samples_per_s']/(2*m):.1%}  x anchor {r['samples_per_s']/a2[0]:.2f}  phases {r.get('phases_ms')}")
    for r in R:
        if r["impl"] != "anchor" and r["world"] == 1 and r.get("phases_ms"):
            print(f"  1 GPU phases {r['phases_ms']}")
PY
