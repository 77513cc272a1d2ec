#!/usr/bin/env bash
# trainer train replaying CUDA graphs (train.cuda_graphs, trainer/step_graphs.h) against the
# eager steps of the same binary, one GPU: the GPU tests first (tests/trainer:step_graphs_test:
# graphs vs eager line by line, and the golden Hugging Face trajectories), then BERT-base (random
# init) on STS-B, bf16, dropout 0.1, 150 steps, batch 32 and 128, eager and graphs alternated;
# samples/s of steps 101-150, GPU busy, eval/spearman at the end; the anchor in the same call.
source bench/ddp_calls/lib.sh
(cd build/gpu && ctest -R "step_graphs_test|train_trajectory_test|train_loop_test" --output-on-failure) > "$O/ctest.log" 2>&1
echo "ctest exit $?: $(grep -E "tests passed|tests failed" "$O/ctest.log")"
grep -E "on the GPU with CUDA graphs|FAILED|Failure" "$O/ctest.log" | head -12
python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig()).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
for b in 32 128; do
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | grep '^{' | cut -c1-200
  for v in false auto false auto; do
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > /tmp/util.txt 2>/dev/null & u=$!
    $B/trainer train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.precision=bf16 \
      train.max_steps=150 train.batch_size=$b train.eval_every_steps=0 train.log_every_steps=50 \
      train.cuda_graphs=$v output.save=none output.dir=/tmp/tg$b$v > "$O/train.$b.$v.log" 2>&1
    rc=$?; kill $u
    util=$(python3 -c "
v=[float(x) for x in open('/tmp/util.txt').read().split()[10:]]; v=[x for x in v if x>0]; print(f'{sum(v)/max(1,len(v)):.0f}%')")
    echo "batch $b graphs=$v exit $rc: $(grep -E '^step 150/' "$O/train.$b.$v.log" | cut -c1-120) | busy $util | $(grep -oE 'eval/spearman [0-9.]+|spearman [0-9.]+' "$O/train.$b.$v.log" | tail -1) | $(grep -E '^graphs|^steps' "$O/train.$b.$v.log" | tr '\n' ' ')"
  done
done
