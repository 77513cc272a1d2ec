#!/usr/bin/env bash
# Records the search-efficiency tables on a GPU host without Bazel (the device tool's machines):
# builds with scripts/gpu_build.sh (`.carry/debs` carried, no tests), runs record.sh with the
# CMake hpo, and copies the journals and logs to $OUT.
#   [TABLES="sts nli cls"] [MAIN_JOB=1] bench/search_tables/record_on_gpu.sh SUFFIX [key=value ...]
# MAIN_JOB=1 also runs the README's main job (hpo sweep configs/lr.yaml) and returns its journal.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}
mkdir -p "$O"
SUFFIX=${1:?usage: record_on_gpu.sh SUFFIX [key=value ...]}
shift
start=$SECONDS
SKIP_TESTS=1 scripts/gpu_build.sh > "$O/build.log" 2>&1 ||
  { echo "gpu_build failed:"; tail -20 "$O/build.log"; exit 1; }
echo "build: $((SECONDS - start)) s"
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi -L
bench/search_tables/record.sh build/gpu/bin/hpo "$SUFFIX" "$@" > "$O/record.log" 2>&1
echo "record.sh exit $?"
grep -E "table: |best trial|points done" "$O/record.log"
cp bench/search_tables/*_"$SUFFIX".log "$O/" 2>/dev/null
if [ -n "${MAIN_JOB:-}" ]; then  # the README's main job too, its journal to $OUT
  start=$SECONDS
  build/gpu/bin/hpo sweep configs/lr.yaml --journal runs/main/journal.log > "$O/main_job.log" 2>&1
  echo "main job exit $? in $((SECONDS - start)) s"
  tail -4 "$O/main_job.log"
  cp runs/main/journal.log "$O/main_job_journal.log"
fi
# The changed trainer's GPU tests (evaluation cadence, CUDA graphs), and the PyTorch anchor
# (eager and torch.compile, BERT-base bf16 batch 32) as this machine's yardstick.
if [ -n "${GPU_TESTS:-}" ]; then
  (cd build/gpu && ctest -R "$GPU_TESTS" --output-on-failure) > "$O/ctest.log" 2>&1
  echo "ctest exit $?: $(grep -E "tests passed|tests failed" "$O/ctest.log")"
fi
if [ -f .carry/anchor/pytorch_anchor.py ]; then
  for flag in "" --compile; do
    python3 .carry/anchor/pytorch_anchor.py --model bert-base --batch 32 --precision bf16 $flag 2>/dev/null | tail -1
  done
fi
ls -la "$O"
