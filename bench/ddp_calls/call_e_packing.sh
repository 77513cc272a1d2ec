#!/usr/bin/env bash
# Issue 7, run 2 as far as a 2-GPU host allows: trial packing through hpo's dev mode (a head and
# one agent with both GPUs). 2 single-GPU trials at once, the same 2 one after another, then one
# 2-GPU trial; BERT-base (random init) on STS-B, 150 steps, batch 32, bf16. nvidia-smi is sampled
# every second during the packed sweep: which trainer pid runs on which GPU.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
SKIP_TESTS=1 scripts/gpu_build.sh > /tmp/build.log 2>&1; rc=$?; echo "gpu_build exit $rc"
[ $rc -eq 0 ] || { grep -E "error|FAILED" /tmp/build.log | head -8; exit 1; }
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
B=$PWD/build/gpu/bin
python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig()).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
W=/tmp/pack; rm -rf $W; mkdir -p $W
cat > $W/train.yaml <<YAML
model: {path: /tmp/bert-base-random, pooling: mean, max_seq_len: 128, dropout: 0.1}
task: {type: sts, train: $PWD/data/stsbenchmark/sts-train.csv, eval: $PWD/data/stsbenchmark/sts-dev.csv, format: stsb}
train: {epochs: 0, max_steps: 150, batch_size: 32, precision: bf16, eval_every_steps: 150, log_every_steps: 50}
output: {save: none, checkpoint: false}
YAML
sweep() {  # sweep NAME GPUS_PER_TRIAL CONCURRENT LRS
  cat > $W/$1.yaml <<YAML
name: $1
metric: {name: eval/spearman, goal: maximize}
trainer: {config: $W/train.yaml}
resources: {gpus_per_trial: $2}
parameters:
  lr: {values: [$4]}
  batch_size: {values: [32]}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: grid}
early_terminate: {type: none}
max_concurrent_trials: $3
max_failures_per_trial: 0
journal: $W/$1/journal.log
YAML
  local t0=$(date +%s.%N)
  $B/hpo sweep $W/$1.yaml > $W/$1.log 2>&1; local rc=$?
  echo "$1: exit $rc, wall $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s; $(grep -c COMPLETE $W/$1.log) complete"
}
( while true; do nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader >> $W/smi.txt 2>/dev/null; sleep 1; done ) &
smi=$!
sweep packed 1 2 "1.0e-4, 2.0e-4"
kill $smi
sweep serial 1 1 "1.0e-4, 2.0e-4"
sweep wide 2 1 "1.0e-4"
echo "packed sweep, trainer pid -> GPU (samples):"; sort $W/smi.txt | uniq -c | sed 's/GPU-\(........\).*/GPU-\1/'
echo "GPU per pid count: $(cut -d, -f1 $W/smi.txt | sort -u | while read p; do grep "^$p," $W/smi.txt | cut -d, -f2 | sort -u | wc -l; done | tr '\n' ' ')"
grep "placed on" $W/packed/logs/head.log | cut -d']' -f2- | cut -c1-140
grep "samples/s\|done " $W/packed/logs/*/trial-*/rank-0.log 2>/dev/null | tail -4 | cut -c1-160
