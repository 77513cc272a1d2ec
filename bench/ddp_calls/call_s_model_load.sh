#!/usr/bin/env bash
# One GPU: loading the model (bench/model_load_bench, BERT-base, to the GPU), then BERT-base
# (random init) bf16 trials as a sweep runs them (configs/sbert_stsb.yaml, one epoch, evaluation
# every 50 steps, best model, no checkpoint) with the trainer before (.carry/tmp/before_*: the
# model's random init drawn, then the read weights copied in) and after (dense weights left
# uninitialized, read tensors taken over), alternated twice at batch 32 and 128; one batch-32
# trial with CUDA_MODULE_LOADING=EAGER (are captures and the first step paying for lazily
# loaded kernels?); the PyTorch anchor last.
source bench/ddp_calls/lib.sh
$B/model_load_bench --device cuda --repeats 3 --dir /tmp/mlb 2>&1 | tail -7
build_before bert_model.h bert_model.cc train_loop.cc
bert_base_random
trial() {  # trial BIN BATCH LOG [env...]
  local bin=$1 b=$2 log=$3; shift 3
  rm -rf /tmp/ts; local t0=$(date +%s.%N)
  env "$@" TUNEFLEET_BIN_DIR=$bin $bin/trainer train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random \
    train.precision=bf16 train.batch_size=$b output.checkpoint=false output.dir=/tmp/ts > "$log" 2>&1
  echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')") s | $(grep -E '^done' "$log" | cut -c10-100)"
  grep -E '^time' "$log"
}
for b in 32 128; do for r in 1 2; do for v in old new; do
  echo -n "batch $b $v: "; trial /tmp/${v}_bin $b "$O/t.$b.$v.$r.log"
done; done; done
echo -n "batch 32 new, CUDA_MODULE_LOADING=EAGER: "; trial /tmp/new_bin 32 "$O/t.eager_loading.log" CUDA_MODULE_LOADING=EAGER
for b in 32 128; do
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | grep '^{' | cut -c1-200
done
