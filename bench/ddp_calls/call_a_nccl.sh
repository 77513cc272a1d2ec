#!/usr/bin/env bash
# Issue 5 on 2 GPUs: where the last percents of DDP scaling go. Ours (fused step) at batch
# 128 and 32 per GPU under NCCL channel limits and a high-priority NCCL stream, the anchor in the
# same call; then the stall timing with ddp_timeout_s 15.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stamp() { echo "=== $* (t=$((SECONDS - T0)) s)"; }
nvidia-smi -L
stamp build
SKIP_TESTS=1 scripts/gpu_build.sh > "$O/build.log" 2>&1; echo "gpu_build exit $?"; grep -E "error:|FAILED" "$O/build.log" | head -5
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
B=build/gpu/bin
RUN=(python3 -m torch.distributed.run --standalone --nproc_per_node=2)
L="$O/nccl.jsonl"
tag() { sed "s/^{/{\"cfg\": \"$1\", /" | grep '^{' | tee -a "$L"; }
for b in 128 32; do
  stamp "batch $b"
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | sed 's/^{/{"impl": "anchor", /' | tag base
  "${RUN[@]}" .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | sed 's/^{/{"impl": "anchor", /' | tag base
  $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant fused 2>/dev/null | tag base
  for cfg in base "NCCL_MAX_CTAS=4 NCCL_MAX_NCHANNELS=4" "NCCL_MAX_CTAS=2 NCCL_MAX_NCHANNELS=2" "TORCH_NCCL_HIGH_PRIORITY=1" "TORCH_NCCL_HIGH_PRIORITY=1 NCCL_MAX_CTAS=4 NCCL_MAX_NCHANNELS=4"; do
    e=(); [ "$cfg" != base ] && read -ra e <<< "$cfg"
    env "${e[@]}" "${RUN[@]}" --no-python $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant fused 2>"$O/err.$b.log" | tag "$cfg"
  done
  $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant fused 2>/dev/null | tag base-again
done
python3 - "$L" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for b in (128, 32):
    a1 = [r["samples_per_s"] for r in rows if r["batch_per_gpu"] == b and r.get("impl") == "anchor" and r["world"] == 1]
    a2 = [r["samples_per_s"] for r in rows if r["batch_per_gpu"] == b and r.get("impl") == "anchor" and r["world"] == 2]
    o1 = [r["samples_per_s"] for r in rows if r["batch_per_gpu"] == b and r.get("impl") != "anchor" and r["world"] == 1]
    print(f"batch {b}: anchor 1 GPU {a1} 2 GPUs {a2} -> {a2[0]/(2*a1[0]):.1%}" if a1 and a2 else f"batch {b}: anchor missing")
    print(f"  ours 1 GPU: {o1}")
    for r in rows:
        if r["batch_per_gpu"] == b and r.get("impl") != "anchor" and r["world"] == 2:
            o = max(o1) if o1 else float("nan")
            print(f"  {r['cfg']:55s} {r['samples_per_s']:8.0f}  eff vs best 1-GPU {r['samples_per_s']/(2*o):.1%}  vs mean {r['samples_per_s']/(2*sum(o1)/len(o1)):.1%}  x anchor {r['samples_per_s']/a2[0]:.2f}")
PY
stamp stall
export MASTER_ADDR=127.0.0.1 MASTER_PORT=29777 WORLD_SIZE=2
python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig()).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
ST="train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.precision=bf16 train.max_steps=100000 train.eval_every_steps=0 train.ddp_timeout_s=15 output.save=none output.checkpoint=false output.dir=/tmp/stall"
RANK=1 LOCAL_RANK=1 $B/trainer $ST > /tmp/s1.log 2>&1 &
p1=$!
RANK=0 LOCAL_RANK=0 $B/trainer $ST > /tmp/s0.log 2>&1 &
p0=$!
for i in $(seq 1 120); do [ -s /tmp/stall/metrics.jsonl ] && break; sleep 0.5; done
kill -STOP $p1; t=$(date +%s.%N); echo "stopped rank 1 at $(tail -1 /tmp/stall/metrics.jsonl | cut -c1-14)"
wait $p0; rc=$?
echo "rank 0 exited $rc after $(echo "$(date +%s.%N) - $t" | bc) s (ddp_timeout_s 15); its error line:"; grep "error" /tmp/s0.log | cut -c1-300
kill -9 $p1; wait $p1 2>/dev/null; sleep 1
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader; echo "compute apps: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
stamp end
