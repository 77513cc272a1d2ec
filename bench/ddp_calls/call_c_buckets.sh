#!/usr/bin/env bash
# Issue 5 on 2 GPUs: gradient bucket size and NCCL algorithm at batch 128 (fused, graph) and
# batch 32 (graph); the anchor in the same call.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
T0=$SECONDS
stamp() { echo "=== $* (t=$((SECONDS - T0)) s)"; }
SKIP_TESTS=1 scripts/gpu_build.sh > "$O/build.log" 2>&1; echo "gpu_build exit $?"; grep -E "error:|FAILED" "$O/build.log" | head -5
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
B=build/gpu/bin
RUN=(python3 -m torch.distributed.run --standalone --nproc_per_node=2)
L="$O/bucket.jsonl"
tag() { sed "s/^{/{\"cfg\": \"$1\", /" | grep '^{' >> "$L"; }
for b in 128 32; do
  stamp "batch $b"
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | sed 's/^{/{"impl": "anchor", "variant": "ddp", /' | tag a
  "${RUN[@]}" .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | sed 's/^{/{"impl": "anchor", "variant": "ddp", /' | tag a
  vs=(graph); [ $b -eq 128 ] && vs=(fused graph)
  for v in "${vs[@]}"; do
    $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v 2>/dev/null | tag base
    for cfg in "25" "100" "400" "25 NCCL_ALGO=Tree" "100 NCCL_PROTO=Simple"; do
      read -r mb e <<< "$cfg"; envs=(); [ -n "${e:-}" ] && envs=("$e")
      env "${envs[@]}" "${RUN[@]}" --no-python $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v --bucket_mb $mb 2>"$O/err.log" | tag "$cfg"
    done
    $B/train_throughput_bench --model bert-base --precision bf16 --batch $b --variant $v 2>/dev/null | tag base
  done
done
python3 - "$L" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for b in (128, 32):
    R = [r for r in rows if r["batch_per_gpu"] == b]
    a1 = [r["samples_per_s"] for r in R if r["impl"] == "anchor" and r["world"] == 1]
    a2 = [r["samples_per_s"] for r in R if r["impl"] == "anchor" and r["world"] == 2]
    print(f"batch {b}: anchor {a1} -> {a2}: {a2[0]/(2*a1[0]):.1%}" if a1 and a2 else f"batch {b}: anchor missing")
    for v in ("fused", "graph"):
        o1 = [r["samples_per_s"] for r in R if r["impl"] != "anchor" and r["variant"] == v and r["world"] == 1]
        for r in R:
            if r["impl"] != "anchor" and r["variant"] == v and r["world"] == 2:
                m = sum(o1) / len(o1)
                print(f"  {v:6s} bucket_mb {r['cfg']:24s} 1 GPU {o1}  2 GPUs {r['samples_per_s']:8.0f}  eff {r['samples_per_s']/(2*m):.1%}  x anchor {r['samples_per_s']/a2[0]:.2f}")
PY
stamp end
