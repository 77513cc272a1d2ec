#!/usr/bin/env bash
# Issue 48, acceptance 2: a sentence-transformers script as a program sweep beside tunefleet's
# own trainer, on the same data, model, search, pruner and GPU. Run from the repository root on a
# GPU host after a CMake build (build/gpu/bin):
#   [OUT=/tmp/out] [TRIALS_PER_GPU="1 2"] [MODES="loop hf_trainer"] bench/gpu/program_vs_native.sh
# Data: STS-B train pairs scored >= 3 as (anchor, positive), runs/program-bench/pairs.jsonl.
# Sweeps: bench/program/native_sweep.yaml (tunefleet's trainer) and st_mnrl_sweep.yaml
# (examples/program/st_mnrl.py --mode MODE), each at N trials a GPU (resources.trials_per_gpu=N,
# max_concurrent_trials=N). Per sweep: wall time, trials (complete / pruned / failed), the best
# value, the best trial's training samples/s (its reports' train/samples_per_s; the trainer's
# metrics.jsonl), the GPU's mean utilisation and most processes on it (nvidia-smi every 0.5 s).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
O=${OUT:-/tmp/out}/program
B=${BIN:-$PWD/build/gpu/bin}
mkdir -p "$O" runs/program-bench
python3 - <<'PY'
import csv, json
with open("data/stsbenchmark/sts-train.csv", encoding="utf-8") as f, \
     open("runs/program-bench/pairs.jsonl", "w", encoding="utf-8") as out:
    n = 0
    for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
        if len(row) >= 7 and float(row[4]) >= 3.0:
            out.write(json.dumps({"anchor": row[5], "positive": row[6]}) + "\n"); n += 1
print(f"pairs: {n} STS-B train pairs scored >= 3")
PY

sweep() {  # sweep NAME SWEEP.yaml N [key=value ...]
  local name=$1 file=$2 n=$3; shift 3
  local d=$O/$name.n$n
  rm -rf "$d" && mkdir -p "$d"
  (while :; do
     echo "T $(date +%s.%N) $(nvidia-smi -i "${CUDA_VISIBLE_DEVICES%%,*}" --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits)"
     nvidia-smi -i "${CUDA_VISIBLE_DEVICES%%,*}" --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
     sleep 0.5
   done) > "$d/smi.txt" 2>&1 &
  local sampler=$! t0; t0=$(date +%s.%N)
  "$B/hpo" sweep "$file" "$@" resources.trials_per_gpu="$n" max_concurrent_trials="$n" \
    --journal "$d/journal.log" > "$d/sweep.log" 2>&1
  local rc=$? t1; t1=$(date +%s.%N)
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  "$B/hpo" status --journal "$d/journal.log" --format json > "$d/status.json" 2>/dev/null
  python3 - "$d" "$name" "$n" "$rc" "$t0" "$t1" <<'PY'
import glob, json, os, sys
d, name, n, rc, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
utils, procs, cur = [], [], 0
for line in open(f"{d}/smi.txt"):
    if line.startswith("T "):
        procs.append(cur); cur = 0
        try: utils.append(float(line.split(None, 2)[2].split(",")[0]))
        except (ValueError, IndexError): pass
    elif "," in line:
        cur += 1
procs.append(cur)
try: trials = json.load(open(f"{d}/status.json"))["trials"]
except Exception: trials = []
states = [t["state"] for t in trials]
best = max((t for t in trials if t["state"] == "COMPLETE"), key=lambda t: t["value"], default=None)
rate = "-"
if best:
    folder = os.path.join(d, "trial-%d" % best["number"])
    lines = []
    for f in (folder + "/.tunefleet/reports.jsonl", folder + "/metrics.jsonl"):
        if os.path.exists(f):
            lines = [json.loads(l) for l in open(f) if l.strip()]
            break
    rates = [l["train/samples_per_s"] for l in lines if isinstance(l.get("train/samples_per_s"), (int, float))]
    if rates: rate = "%.0f" % (sum(rates) / len(rates))
print(f"{name} N={n}: exit {rc}, wall {t1 - t0:.1f} s, {len(trials)} trials ({states.count('COMPLETE')} complete, "
      f"{states.count('PRUNED')} pruned, {states.count('FAIL')} failed), best "
      f"#{best['number'] if best else '-'} {best['value'] if best else '-'}"
      f" (batch {best['params']['batch_size'] if best else '-'}), its samples/s {rate}, "
      f"GPU util mean {sum(utils) / max(1, len(utils)):.0f}%, most processes on the GPU {max(procs)}")
PY
}

for n in ${TRIALS_PER_GPU:-1 2}; do
  [ -n "${SKIP_NATIVE:-}" ] || sweep native bench/program/native_sweep.yaml "$n"
  for mode in ${MODES:-loop}; do
    # The trainers report the evaluator's keys as transformers names them.
    metric=eval/ndcg@10
    [ "$mode" = loop ] || metric=eval_stsb-dev_cosine_ndcg@10
    sweep "st-$mode" bench/program/st_mnrl_sweep.yaml "$n" metric.name="$metric" "trainer.program=[python3, examples/program/st_mnrl.py, --model, data/bert-tiny-random, --train, runs/program-bench/pairs.jsonl, --eval-dir, data/retrieval/stsb-dev, --lr, '{lr}', --batch-size, '{batch_size}', --epochs, '3', --evals, '6', --mode, $mode]"
  done
done
