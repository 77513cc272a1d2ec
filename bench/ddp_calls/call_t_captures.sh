#!/usr/bin/env bash
# One GPU: where CUDA-graph capture time goes in `trainer train` (the graphs line: recording,
# instantiating, new memory segments), BERT-base (random init) bf16 trials as a sweep runs them,
# batch 32 twice, batch 32 with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, batch 128;
# the GPU tests of the trainer's changed parts first; the PyTorch anchor last.
source bench/ddp_calls/lib.sh
(cd build/gpu && ctest -R "step_graphs_test|train_loop_test|bert_model_test|host_snapshot_test|train_trajectory_test" --output-on-failure) > "$O/ctest.log" 2>&1
echo "ctest exit $?: $(grep -E "tests passed|tests failed" "$O/ctest.log")"
bert_base_random
trial() {  # trial BATCH LOG [env...]
  local b=$1 log=$2; shift 2
  rm -rf /tmp/tt; local t0=$(date +%s.%N)
  env "$@" $B/trainer train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random \
    train.precision=bf16 train.batch_size=$b output.checkpoint=false output.dir=/tmp/tt > "$log" 2>&1
  echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')") s | $(grep -E '^done' "$log" | cut -c10-100)"
  grep -E '^time|^graphs' "$log"
}
echo -n "batch 32: "; trial 32 "$O/t32a.log"
echo -n "batch 32: "; trial 32 "$O/t32b.log"
echo -n "batch 32, expandable segments: "; trial 32 "$O/t32x.log" PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
echo -n "batch 128: "; trial 128 "$O/t128.log"
for b in 32 128; do
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | grep '^{' | cut -c1-200
done
