#!/usr/bin/env bash
# Several trials per GPU (issue 36): runs a sweep in dev mode on one GPU at each of
# TRIALS_PER_GPU (default "1 2 4 8") trials a GPU (resources.trials_per_gpu=N,
# max_concurrent_trials=N) and prints, per N, the wall time, trials per hour, the GPU's mean
# utilisation and memory (nvidia-smi every 0.5 s), the most trainer processes seen on the GPU at
# once, failures, and the best trial; hpo's lines are stamped with the time ($EPOCHREALTIME).
# Logs, journals and samples go to OUT (default /tmp/tpg).
#   [HPO=build/gpu/bin/hpo] [OUT=...] bench/gpu/trials_per_gpu.sh NAME SWEEP.yaml [key=value ...]
set -uo pipefail
NAME=${1:?usage: trials_per_gpu.sh NAME SWEEP.yaml [key=value ...]} SWEEP=${2:?sweep file}
shift 2
HPO=${HPO:-build/gpu/bin/hpo}
O=${OUT:-/tmp/tpg}/$NAME
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
for n in ${TRIALS_PER_GPU:-1 2 4 8}; do
  dir="$O/n$n"
  rm -rf "$dir" && mkdir -p "$dir"
  (while :; do
     echo "T $(date +%s.%N) $(nvidia-smi -i "${CUDA_VISIBLE_DEVICES%%,*}" --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits)"
     nvidia-smi -i "${CUDA_VISIBLE_DEVICES%%,*}" --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
     sleep 0.5
   done) > "$dir/smi.txt" 2>&1 &
  sampler=$!
  t0=$(date +%s.%N)
  "$HPO" sweep "$SWEEP" "$@" resources.trials_per_gpu=$n max_concurrent_trials=$n \
    --journal "$dir/journal.log" 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$dir/sweep.log"
  rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  "$HPO" status --journal "$dir/journal.log" --format json > "$dir/status.json" 2>/dev/null
  python3 - "$dir" "$n" "$rc" "$t0" "$t1" <<'PY' | tee "$dir/summary.txt"
import json, sys
d, n, rc, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
wall = t1 - t0
utils, mems, procs, cur = [], [], [], 0
for line in open(f"{d}/smi.txt"):
    if line.startswith("T "):
        if utils: procs.append(cur)
        cur = 0
        parts = line.split(None, 2)[2].split(",")
        try: utils.append(float(parts[0])); mems.append(float(parts[1]))
        except (ValueError, IndexError): pass
    elif "trainer" in line:
        cur += 1
procs.append(cur)
try: trials = json.load(open(f"{d}/status.json"))["trials"]
except Exception: trials = []
states = [t["state"] for t in trials]
done = [t for t in trials if t["state"] in ("COMPLETE", "PRUNED")]
best = max((t for t in trials if t["state"] == "COMPLETE"), key=lambda t: t["value"], default=None)
alone = sum(1 for t in trials if t.get("user_attrs", {}).get("requeued_alone"))
print(f"N={n} rc={rc} wall {wall:.1f} s, {len(done)} trials ({states.count('COMPLETE')} complete, "
      f"{states.count('PRUNED')} pruned, {states.count('FAIL')} failed, {alone} re-run alone), "
      f"{3600 * len(done) / wall:.0f} trials/h, GPU util mean {sum(utils) / max(1, len(utils)):.0f}%, "
      f"memory max {max(mems, default=0):.0f} MiB, most trainer processes on the GPU {max(procs)}, "
      f"best #{best['number'] if best else '-'} {best['value'] if best else '-'}")
PY
done
