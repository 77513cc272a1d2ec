#!/usr/bin/env bash
# Issue 5 on a one-GPU host: where a step's time goes (train_throughput_bench --phases: CUDA
# events after forward, backward, the gradient all-reduce wait, the optimizer), BERT-base bf16,
# fused step at batch 32 and 128, alone and as a 1-rank DDP job (torchrun, NCCL: GradSync's
# hooks and bucket views, no peer), beside the graph step and the anchor in the same call.
source bench/ddp_calls/lib.sh
RUN1=(python3 -m torch.distributed.run --standalone --nproc_per_node=1 --no-python)
L="$O/phases.jsonl"
tag() { grep '^{' | sed "s/^{/{\"cfg\": \"$1\", /" | tee -a "$L" | cut -c1-400; }
for b in 32 128; do
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | tag anchor
  $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant fused --phases 2>"$O/err.log" | tag alone
  "${RUN1[@]}" $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant fused --phases 2>>"$O/err.log" | tag ddp1
  $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant graph 2>>"$O/err.log" | tag alone
  "${RUN1[@]}" $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant graph 2>>"$O/err.log" | tag ddp1
done
grep -iE "error" "$O/err.log" | head -5
