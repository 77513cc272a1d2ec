#!/usr/bin/env bash
# Issue 5, acceptance 4 on 2 GPUs: SIGSTOP of rank 1 while BERT-base trains with
# train.ddp_timeout_s=15; the time from the stop to rank 0's exit, its error line, and the GPUs
# afterwards. Run from the repository root (scripts/gpu_build.sh needs .carry/debs).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
SKIP_TESTS=1 scripts/gpu_build.sh > /tmp/build.log 2>&1; rc=$?; echo "gpu_build exit $rc"; grep -E "ucx|UCX" /tmp/build.log | head -3; [ $rc -eq 0 ] || { grep -E "error|Error|FAILED" /tmp/build.log | head -8; tail -5 /tmp/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
B=build/gpu/bin
now() { python3 -c 'import time; print(f"{time.time():.3f}")'; }
python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig()).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
export MASTER_ADDR=127.0.0.1 MASTER_PORT=29777 WORLD_SIZE=2
for run in 1 2; do
  rm -rf /tmp/stall
  ST="train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.precision=bf16 train.max_steps=100000 train.eval_every_steps=0 train.ddp_timeout_s=15 output.save=none output.checkpoint=false output.dir=/tmp/stall"
  RANK=1 LOCAL_RANK=1 $B/trainer $ST > /tmp/s1.log 2>&1 &
  p1=$!
  RANK=0 LOCAL_RANK=0 $B/trainer $ST > /tmp/s0.log 2>&1 &
  p0=$!
  for i in $(seq 1 240); do [ -s /tmp/stall/metrics.jsonl ] && break; sleep 0.5; done
  sleep 2
  kill -STOP $p1; t=$(now)
  wait $p0; rc=$?; t1=$(now)
  echo "run $run: rank 0 exited $rc $(python3 -c "print(f'{$t1 - $t:.2f}')") s after the SIGSTOP of rank 1 (ddp_timeout_s 15): $(grep 'error' /tmp/s0.log | tail -1 | cut -c1-200)"
  kill -9 $p1; wait $p1 2>/dev/null; sleep 1
  echo "  GPUs: $(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader | tr '\n' ' ') compute apps: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
done
