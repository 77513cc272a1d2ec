#!/usr/bin/env bash
# Records the search-efficiency tables on a GPU host without Bazel (the device tool's machines):
# builds with scripts/gpu_build.sh (`.carry/debs` carried, no tests), runs record.sh with the
# CMake hpo, and copies the journals and logs to $OUT.
#   bench/search_tables/record_on_gpu.sh SUFFIX [key=value ...]     e.g. SUFFIX=h100
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
ls -la "$O"
