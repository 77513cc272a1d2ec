# Sourced first by the device-call scripts here (run from the repository root on a GPU host,
# with `.carry` carried): multi-GPU settings, the CMake build against the host's LibTorch
# (scripts/gpu_build.sh, its log in $OUT/build.log), then B = the folder of the binaries.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
SKIP_TESTS=1 scripts/gpu_build.sh > "$O/build.log" 2>&1; rc=$?; echo "gpu_build exit $rc"
[ $rc -eq 0 ] || { grep -E "error|FAILED" "$O/build.log" | head -8; exit 1; }
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
B=$PWD/build/gpu/bin
