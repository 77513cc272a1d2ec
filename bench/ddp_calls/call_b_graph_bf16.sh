#!/usr/bin/env bash
# Issue 5 on 2 GPUs: the CUDA-graph step under DDP (GradSync built on the capture's side
# stream), and bf16 gradient buckets, against the anchor in the same call.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stamp() { echo "=== $* (t=$((SECONDS - T0)) s)"; }
stamp build
SKIP_TESTS=1 scripts/gpu_build.sh > "$O/build.log" 2>&1; echo "gpu_build exit $?"; grep -E "error:|FAILED" "$O/build.log" | head -5
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
B=build/gpu/bin
RUN=(python3 -m torch.distributed.run --standalone --nproc_per_node=2)
L="$O/graph.jsonl"
tag() { sed "s/^{/{\"cfg\": \"$1\", /" | grep '^{' | tee -a "$L" | cut -c1-160; }
for b in 32 128; do
  stamp "batch $b"
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | sed 's/^{/{"impl": "anchor", "variant": "ddp", /' | tag a1
  "${RUN[@]}" .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | sed 's/^{/{"impl": "anchor", "variant": "ddp", /' | tag a2
  for v in graph fused; do
    $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v 2>"$O/e1.$v.$b.log" | tag "$v"
    "${RUN[@]}" --no-python $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v 2>"$O/e2.$v.$b.log" | tag "$v"
    grep -iE "error|what\(\)" "$O/e2.$v.$b.log" | head -3 | cut -c1-300
    "${RUN[@]}" --no-python $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v --grad_comm bf16 2>"$O/e3.$v.$b.log" | tag "$v-bf16"
    grep -iE "error|what\(\)" "$O/e3.$v.$b.log" | head -3 | cut -c1-300
    $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v 2>/dev/null | tag "$v"
  done
done
python3 - "$L" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for b in (32, 128):
    R = [r for r in rows if r["batch_per_gpu"] == b]
    a1 = [r["samples_per_s"] for r in R if r["impl"] == "anchor" and r["world"] == 1]
    a2 = [r["samples_per_s"] for r in R if r["impl"] == "anchor" and r["world"] == 2]
    print(f"batch {b}: anchor {a1} -> {a2}: {a2[0]/(2*a1[0]):.1%}" if a1 and a2 else f"batch {b}: anchor missing")
    for v in ("graph", "fused"):
        o1 = [r["samples_per_s"] for r in R if r["impl"] != "anchor" and r["variant"] == v and r["world"] == 1]
        for r in R:
            if r["impl"] != "anchor" and r["variant"] == v and r["world"] == 2:
                m = sum(o1) / len(o1) if o1 else float("nan")
                print(f"  {r['cfg']:12s} 1 GPU {o1}  2 GPUs {r['samples_per_s']:8.0f}  eff vs mean {r['samples_per_s']/(2*m):.1%}  vs max {r['samples_per_s']/(2*max(o1)):.1%}  x anchor {r['samples_per_s']/a2[0]:.2f}  loss_last {r['loss_last']}")
PY
stamp end
