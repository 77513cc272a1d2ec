#!/usr/bin/env bash
# Prepared for a 2-GPU host (nvidia-h200-x2): trainer train as a 2-rank DDP job with CUDA graphs
# (train.cuda_graphs: true, not the default under DDP until this runs) against the eager DDP job
# and the 1-GPU runs, STS-B (sts) and PAWS (mnrl, negatives gathered from both ranks), BERT-base
# (random init), bf16, batch 32 per GPU, 150 steps; samples/s of steps 101-150, the loss at step
# 150 and eval/spearman; then the anchor on 1 and 2 GPUs in the same call.
source bench/ddp_calls/lib.sh
RUN2=(python3 -m torch.distributed.run --standalone --nproc_per_node=2 --no-python)
python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig()).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
cat > /tmp/mnrl.yaml <<YAML
model: {path: /tmp/bert-base-random, pooling: mean, max_seq_len: 128, dropout: 0.1}
task: {type: mnrl, train: $PWD/data/paws-wiki/dev.tsv, format: paws}
train: {precision: bf16}
YAML
run() {  # run NAME LAUNCH... -- CONFIG GRAPHS
  local name=$1; shift
  $@ train.max_steps=150 train.batch_size=32 train.eval_every_steps=0 train.log_every_steps=50 \
    output.save=none output.dir=/tmp/dg.$name > "$O/$name.log" 2>&1
  echo "$name exit $?: $(grep -E '^step 150/' "$O/$name.log" | cut -c1-110) | $(grep -oE 'eval/spearman [0-9.]+' "$O/$name.log" | tail -1) | $(grep -E '^steps|^graphs|error' "$O/$name.log" | tr '\n' ' ' | cut -c1-200)"
}
STS=(--config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.precision=bf16)
for v in false true; do
  run sts.1gpu.$v $B/trainer train "${STS[@]}" train.cuda_graphs=$v
  run sts.2gpu.$v "${RUN2[@]}" $B/trainer train "${STS[@]}" train.cuda_graphs=$v
  run mnrl.2gpu.$v "${RUN2[@]}" $B/trainer train --config /tmp/mnrl.yaml train.cuda_graphs=$v
done
python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch 32 2>/dev/null | grep '^{' | cut -c1-200
python3 -m torch.distributed.run --standalone --nproc_per_node=2 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch 32 2>/dev/null | grep '^{' | cut -c1-200
