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

# bert_base_random: /tmp/bert-base-random, a BERT-base folder with seeded random weights
# (transformers) and the uncased vocabulary.
bert_base_random() {
  python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig()).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
  cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
}

# build_before F...: the binaries as built in /tmp/new_bin, and in /tmp/old_bin the trainer
# rebuilt with trainer/F taken from .carry/tmp/before_F (the sources are put back after).
build_before() {
  rm -rf /tmp/new_bin && cp -r build/gpu/bin /tmp/new_bin
  local f
  for f in "$@"; do cp trainer/$f /tmp/new_$f; cp .carry/tmp/before_$f trainer/$f; done
  cmake --build build/gpu -j16 --target trainer_torch > "$O/build_old.log" 2>&1; echo "before build exit $?"
  rm -rf /tmp/old_bin && cp -r build/gpu/bin /tmp/old_bin
  for f in "$@"; do cp /tmp/new_$f trainer/$f; done
}
