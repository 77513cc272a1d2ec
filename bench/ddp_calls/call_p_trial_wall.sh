#!/usr/bin/env bash
# One GPU: a whole sweep-like trial, eager vs CUDA graphs: trainer train on STS-B as
# configs/sbert_stsb.yaml says (one epoch, 180 steps at batch 32, evaluation every 50 steps),
# BERT-base (random init), bf16; process wall time, and the capture time with its instantiation
# share (the `graphs` line).
source bench/ddp_calls/lib.sh
bert_base_random
for b in 32 128; do for v in false auto false auto; do
  t0=$(date +%s.%N)
  $B/trainer train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.precision=bf16 \
    train.batch_size=$b train.cuda_graphs=$v output.save=none output.dir=/tmp/tw$b$v > "$O/trial.$b.$v.log" 2>&1; rc=$?
  wall=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')")
  echo "batch $b graphs=$v exit $rc wall ${wall} s | $(grep -E '^done' "$O/trial.$b.$v.log" | cut -c1-90) | $(grep -E '^graphs' "$O/trial.$b.$v.log")"
  grep -E '^eval' "$O/trial.$b.$v.log" | sed 's/.*(\(.*\))/\1/' | tr '\n' ' '; echo
done; done
