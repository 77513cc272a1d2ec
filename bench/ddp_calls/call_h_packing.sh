#!/usr/bin/env bash
# Issue 7, run 2 (prepared; for a host of 4 or 8 GPUs): trial packing through hpo's dev mode (a
# head and one agent with all G GPUs). G single-GPU trials at once, the same G one after another,
# then 2 trials of G/2 GPUs at once; BERT-base (random init) on STS-B, 150 steps, batch 32, bf16.
# nvidia-smi is sampled every second during the packed and wide sweeps: which trainer pid runs on
# which GPU. (It replaces call_e_packing.sh, the 2-GPU version that ran on the 2xH200 host; on 2 GPUs
# its wide sweep is 2 one-GPU trials at once.)
source bench/ddp_calls/lib.sh
G=$(nvidia-smi -L | wc -l); echo "$G GPU(s)"
LRS=$(python3 -c "print(', '.join(f'{(k + 1) * 1e-5:.1e}' for k in range($G)))")
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
smi() { ( while true; do nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader >> $W/smi-$1.txt 2>/dev/null; sleep 1; done ) & }
smi packed; s=$!
sweep packed 1 $G "$LRS"
kill $s
sweep serial 1 1 "$LRS"
smi wide; s=$!
# Each rank of an agent's run sees only its own GPU (CUDA_VISIBLE_DEVICES): NCCL's log says
# whether the peers still talk over NVLink (P2P) or through host memory (SHM).
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P sweep wide $((G / 2)) 2 "1.0e-4, 2.0e-4"
kill $s
echo "NCCL transports of the wide trials: $(grep -ho 'via [A-Za-z/]*' $W/wide/logs/trial-*/rank-*.log | sort | uniq -c | tr '\n' ' ')"
for k in packed wide; do
  echo "$k sweep: pids seen per GPU: $(cut -d, -f2 $W/smi-$k.txt | sort | uniq | while read g; do grep -c ", *$g" <(sort -u $W/smi-$k.txt) ; done | tr '\n' ' ')"
  echo "$k sweep: GPUs seen per pid: $(cut -d, -f1 $W/smi-$k.txt | sort -u | while read p; do grep "^$p," $W/smi-$k.txt | cut -d, -f2 | sort -u | wc -l; done | tr '\n' ' ')"
done
grep "placed on" $W/packed/logs/head.log | cut -d']' -f2- | cut -c1-140
grep "samples/s\|done " $W/packed/logs/*/trial-*/rank-0.log 2>/dev/null | tail -4 | cut -c1-160
