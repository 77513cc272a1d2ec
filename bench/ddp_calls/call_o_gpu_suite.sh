#!/usr/bin/env bash
# One GPU: the whole CMake test suite (scripts/gpu_build.sh with its ctest), then the README's
# main job, `hpo sweep configs/lr.yaml` (dev mode: a head and an agent with the host's GPUs;
# bert-tiny-random on STS-B, 28 points), with the trainer's default (CUDA graphs) and with
# train.cuda_graphs: false; wall time, trials complete / pruned, the best point.
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p "$O"
scripts/gpu_build.sh > "$O/build.log" 2>&1; echo "gpu_build (with ctest) exit $?"
grep -E "tests passed|tests failed|Not Run|Failed|\*\*\*" "$O/build.log" | head -20
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
B=$PWD/build/gpu/bin
sed 's/overrides: {train.epochs: 1}/overrides: {train.epochs: 1, train.cuda_graphs: false}/; s#journal: runs/sbert-stsb-lr#journal: runs/eager#' configs/lr.yaml > /tmp/lr_eager.yaml
grep -q "cuda_graphs: false" /tmp/lr_eager.yaml || echo "sed did not apply"
for c in configs/lr.yaml /tmp/lr_eager.yaml; do
  t0=$(date +%s.%N)
  $B/hpo sweep $c > "$O/sweep.$(basename $c).log" 2>&1; rc=$?
  echo "$c: exit $rc, wall $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s; complete $(grep -c 'COMPLETE' "$O/sweep.$(basename $c).log"), pruned $(grep -c 'PRUNED' "$O/sweep.$(basename $c).log")"
  grep -iE "^best|best " "$O/sweep.$(basename $c).log" | tail -2
done
find runs -name "stdout*" -o -name "*.log" 2>/dev/null | head -3
grep -rh "^steps\|^graphs" runs 2>/dev/null | sort | uniq -c | head -5
