#!/usr/bin/env bash
# After call_k: the GPU tests again (tests/trainer:step_graphs_test and the trainer's tests), then
# trainer train eager vs CUDA graphs on the other task types, one GPU, BERT-base (random init),
# bf16, dropout 0.1, batch 32, 150 steps: mnrl on PAWS (dev.tsv), classification and nli on SICK.
source bench/ddp_calls/lib.sh
(cd build/gpu && ctest -R "step_graphs_test|train_trajectory_test|train_loop_test|task_model_test" --output-on-failure) > "$O/ctest.log" 2>&1
echo "ctest exit $?: $(grep -E "tests passed|tests failed" "$O/ctest.log")"
grep -E "on the GPU with CUDA graphs|Failure|INTERNAL" "$O/ctest.log" | head -12
python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig(), add_pooling_layer=True).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
for t in "mnrl data/paws-wiki/dev.tsv paws" "classification data/sick/SICK.txt sick" "nli data/sick/SICK.txt sick"; do
  set -- $t
  cat > /tmp/task_$1.yaml <<YAML
model: {path: /tmp/bert-base-random, pooling: mean, max_seq_len: 128, dropout: 0.1}
task: {type: $1, train: $PWD/$2, format: $3}
train: {precision: bf16}
YAML
  for v in false auto false auto; do
    $B/trainer train --config /tmp/task_$1.yaml \
      train.max_steps=150 train.batch_size=32 train.eval_every_steps=0 train.log_every_steps=50 \
      train.cuda_graphs=$v output.save=none output.dir=/tmp/tl$1$v > "$O/train.$1.$v.log" 2>&1
    echo "$1 graphs=$v exit $?: $(grep -E '^step 150/' "$O/train.$1.$v.log" | cut -c1-110) | $(grep -E '^graphs|error' "$O/train.$1.$v.log" | tr '\n' ' ')"
  done
done
