#!/usr/bin/env bash
# launch: once on a GPU host (issue 48): configs/program_torchrun.yaml, `torchrun` starting
# examples/program/train_ddp.py's ranks itself from the PET_* settings the agent gives it, on
# GPUS (default: every GPU) GPUs a trial. Prints hpo's summary, the trials' states, the first
# trial's torchrun settings as its log shows them, and any train_ddp.py process left afterwards.
#   [BIN=build/gpu/bin] [OUT=/tmp/out] [GPUS=N] bench/gpu/program_torchrun.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
B=${BIN:-$PWD/build/gpu/bin}
O=${OUT:-/tmp/out}/torchrun
GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}
mkdir -p "$O"
t0=$(date +%s.%N)
"$B/hpo" sweep configs/program_torchrun.yaml resources.gpus_per_trial="$GPUS" \
  --journal "$O/journal.log" > "$O/sweep.log" 2>&1
echo "torchrun, $GPUS GPU(s) a trial: exit $?, wall $(python3 -c "import time; print(f'{time.time() - $t0:.1f}')") s"
grep -E "^trial|^best" "$O/sweep.log"
grep -m3 -E "nproc_per_node|world_size|entrypoint" "$O"/logs/trial-0/rank-0.log 2>/dev/null
sleep 1
left=$(pgrep -af "examples/program/train_ddp.py" || true)
echo "left running: ${left:-none}"
