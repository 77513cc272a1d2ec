#!/usr/bin/env bash
# Issue 5 on a one-GPU host: why a 1-rank DDP job's eager backward at batch 32 takes 14.4 ms
# instead of 8.5 (call_i_phases_1gpu.sh). The step is launch-bound there, so the host time of
# each bucket's all-reduce launch (from the autograd thread) delays the backward kernels behind
# it. Fused step, BERT-base bf16, --phases; default, 100 MiB buckets (5 collectives instead of
# 19), the NCCL flight recorder off, every launch after backward (--no_overlap); the same at 128.
source bench/ddp_calls/lib.sh
RUN1=(python3 -m torch.distributed.run --standalone --nproc_per_node=1 --no-python)
L="$O/cpu_cost.jsonl"
show() { grep '^{' | sed "s/^{/{\"cfg\": \"$1\", /" | tee -a "$L" | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(f\"{r['cfg']:45s} b{r['batch_per_gpu']:<4} world {r['world']} {r['samples_per_s']:8.1f}/s step {r['step_ms']:6.2f} ms phases {r['phases_ms']}\")"; }
for b in 32 128; do
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | grep '^{' | tee -a "$L" | cut -c1-200
  F=(--model bert-base --precision bf16 --batch $b --variant fused --phases)
  $B/train_throughput_bench "${F[@]}" 2>"$O/err.log" | show alone
  for cfg in base --bucket_mb=100 TORCH_NCCL_TRACE_BUFFER_SIZE=0 --no_overlap; do
    envs=(); flags=()
    case $cfg in base) ;; --*) flags+=("$cfg") ;; *) envs+=("$cfg") ;; esac
    env "${envs[@]}" "${RUN1[@]}" $B/train_throughput_bench "${F[@]}" "${flags[@]}" 2>>"$O/err.log" | show "ddp1 $cfg"
  done
done
