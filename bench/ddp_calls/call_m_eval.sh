#!/usr/bin/env bash
# Evaluation speed in trainer train, one GPU: sts-dev (1,500 pairs) with BERT-base (random init),
# bf16, at the end of a 1-step run; the old evaluator (two encoder passes, a copy back after each
# batch, batch 64) against the new one (one pass per pair, results copied back once) at eval
# batch 64, 128, 256, 512. The old evaluator.cc comes from .carry/tmp/evaluator_old.cc.
source bench/ddp_calls/lib.sh
(cd build/gpu && ctest -R "step_graphs_test|train_loop_test|train_config_test|train_trajectory_test" --output-on-failure) > "$O/ctest.log" 2>&1
echo "ctest exit $?: $(grep -E "tests passed|tests failed" "$O/ctest.log")"
rm -rf /tmp/new_bin && cp -r build/gpu/bin /tmp/new_bin
cp trainer/evaluator.cc /tmp/evaluator_new.cc && cp .carry/tmp/evaluator_old.cc trainer/evaluator.cc
cmake --build build/gpu -j16 > "$O/build_old.log" 2>&1; echo "old build exit $?"
rm -rf /tmp/old_bin && cp -r build/gpu/bin /tmp/old_bin && cp /tmp/evaluator_new.cc trainer/evaluator.cc
python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig()).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
ev() {  # ev BIN_DIR EVAL_BATCH
  $1/trainer train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.precision=bf16 \
    train.max_steps=3 train.eval_every_steps=1 train.eval_batch_size=$2 output.save=none output.dir=/tmp/ev 2>&1 | grep "^eval" | tail -2 | tr '\n' ' '
}
for r in 1 2; do
  echo "old 64: $(ev /tmp/old_bin 64)"
  for e in 64 128 256 512; do echo "new $e: $(ev /tmp/new_bin $e)"; done
done
