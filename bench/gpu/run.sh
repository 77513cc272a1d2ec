#!/usr/bin/env bash
# The GPU benchmarks and checks, one driver: run from the repository root on a GPU host with
# `.carry` carried (.carry/debs from scripts/fetch_gpu_debs.sh, .carry/anchor/pytorch_anchor.py
# copied from shared/bench). Builds with CMake once (scripts/gpu_build.sh; its log in
# $OUT/build.log), then runs each SUITE named, in order, its logs under $OUT/SUITE/ and its
# summary lines on stdout.
#   bench/gpu/run.sh SUITE...
# Suites (one GPU unless said):
#   tests       the whole CMake test suite (ctest; those needing Optuna are skipped where the host's
#               Python lacks it)
#   sweep       the README's main job, `hpo sweep configs/lr.yaml` (dev mode, bert-tiny-random,
#               STS-B): exit, wall time, trials complete and pruned, runs/ size, the best point
#   trial       whole sweep-like trials (configs/sbert_stsb.yaml: one epoch, evaluation every 50
#               steps, no checkpoint), BERT-base (random init) bf16, eager and CUDA graphs at each
#               batch: process wall time, the `time` and `graphs` lines, the final evaluation
#   warm        warm trainer workers against a fresh process per trial: a sweep of WARM_TRIALS (6)
#               BERT-base (random init) bf16 batch-32 one-epoch STS-B trials one after another, with
#               resources.reuse_workers true and false: wall time, each trial's submit-to-end
#               seconds from the journal, the trials' `time` lines
#   tasks       trainer train, eager against CUDA graphs, on the other task types (mnrl on PAWS,
#               classification and nli on SICK), 150 steps
#   throughput  bench/train_throughput_vs_anchor.sh: train_throughput_bench's variants against the
#               PyTorch anchor, eager and --compile, in one table
#   kernels     trainer/model/fused_norm.h's kernels against ATen's operations: train_throughput_bench
#               --phases (eager step) and the graph step at each batch, both ways
#   profile     one eager batch-128 step's GPU time by kernel, through Nsight Compute (ncu): two
#               runs one step apart, summarized by bench/gpu/kernel_profile.py
#   load        bench/model_load_bench: loading BERT-base onto the GPU
#   anchor      the PyTorch anchor alone, eager and --compile
#   telemetry   the agent's NVML telemetry against nvidia-smi's own readings: a sweep of 4
#               BERT-base (random init) bf16 one-epoch STS-B trials (batch 32 and 128), one at a
#               time, nvidia-smi sampled every 0.5 s (bench/gpu/telemetry_check.py); and one
#               trainer run's memory lines (the allocator's peak, NVML's used)
#   ddp         (2+ GPUs) bench/ddp_scaling_vs_anchor.sh on every GPU of the host
#   stall       (2 GPUs) SIGSTOP of rank 1 while BERT-base trains with train.ddp_timeout_s=15: the time
#               to rank 0's exit, its error line, the GPUs afterwards
#   zero1       (2+ GPUs) train.strategy zero1 against ddp on every GPU of the host (train.devices=-1),
#               BERT-base (random init): fp32, dropout 0, file order, 30 steps (the losses compared,
#               tests/integration/compare_runs.py); bf16 batch 32, 150 steps, CUDA graphs (rank 0's
#               memory lines, the AdamW state, samples/s, graphs); the anchor under torchrun on
#               the same GPUs, eager and --compile
#   packing     (2+ GPUs) trial packing through dev mode: G one-GPU trials at once, the same one
#               after another, then trials of G/2 GPUs; nvidia-smi sampled every second
#   ddp_real    (issue 31) `trainer train` on real data at 1, 2 and 4 GPUs (as many as the host
#               has; DEVICES overrides), BERT-base (random init) bf16, the default settings: STS-B
#               EPOCHS (8) epochs and NLI on SICK NLI_EPOCHS (4), at each batch per GPU; on the
#               most GPUs also train.group_by_length=false, cuda_graphs=false, both, and the STS-B
#               eval over QUALITY_SEEDS (1 2) more seeds grouped and not (VARIANTS: other runs on
#               the most GPUs, VARIANTS_ALL on every count; DEFAULTS=0 skips the default runs). Table: steps phase (captures included) and whole process, speed-up
#               over 1 GPU, samples/s against ddp_anchor's on the same GPUs
#   ddp_anchor  hf_ddp_anchor.py (.carry/anchor/) ANCHOR_VARIANTS (eager compile) on ANCHOR_GPUS (1
#               and every GPU) GPUs for ANCHOR_EPOCHS (8) epochs, into ddp_real's table
#   ddp_sweep   (2+ GPUs; issue 31) multi-GPU trials in a sweep against `trainer train` on as many
#               GPUs: for each trial width (SWEEP_GPUS: 2 and every GPU) a dev-mode sweep of
#               SWEEP_TRIALS (4) trials, BERT-base (random init) bf16, STS-B SWEEP_EPOCHS (2)
#               epochs, batch 32 per GPU, an evaluation per epoch, as many at once as the host
#               holds, with resources.reuse_workers SWEEP_REUSE (true false), workers recycled
#               after SWEEP_WORKER_MAX_TRIALS (16) trials; and `trainer train
#               train.devices=N` of the same config. Per trial: submit-to-end seconds, its `group`
#               and `time` lines; warnings in the workers' logs
#   crossenc    (issue 50) the cross-encoder goldens (data/golden/make_cross_encoder_goldens.py,
#               make_sbert_goldens.py: $OUT/crossenc/*.json and the two head files, to commit); a
#               cross-encoder trained here (configs/reranker_stsb.yaml, 60 steps) checked in
#               transformers and sentence-transformers (tests/gpu/cross_encoder_check.py); and
#               cross-encoder training samples/s at BATCHES, BERT-base (random init) bf16, against
#               bench/gpu/st_cross_encoder_reference.py on the same rows
#   multinode   (4 GPUs) tests/integration/multinode_trial_test.sh: two network namespaces of 2
#               GPUs each, one 4-rank NCCL trial across them (iproute2 from .carry/iproute2 when
#               the host lacks ip)
# Parameters (environment): BATCHES ("32 128"), MODEL (bert-base), REPEATS (2: runs of each
# trial variant, alternated), SKIP_BUILD=1 (binaries already in build/gpu/bin).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
[ $# -gt 0 ] || { sed -n 2,30p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ -f CMakeLists.txt ] && [ -d trainer ] || { echo "run: run me from the repository root" >&2; exit 2; }
O=${OUT:-/tmp/out}; mkdir -p "$O"
BATCHES=(${BATCHES:-32 128})
MODEL=${MODEL:-bert-base}
REPEATS=${REPEATS:-2}
ANCHOR=.carry/anchor/pytorch_anchor.py
B=$PWD/build/gpu/bin
export LD_LIBRARY_PATH=/tmp/tfdeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

for s in "$@"; do
  case $s in tests|sweep|warm|trial|tasks|throughput|kernels|profile|load|anchor|telemetry|ddp|stall|zero1|packing|ddp_real|ddp_anchor|ddp_sweep|multinode|crossenc) ;;
    *) echo "run: unknown suite '$s' (run with no argument for the list)" >&2; exit 2 ;; esac
done

# ---- helpers ---------------------------------------------------------------------------------
wall_since() { python3 -c "print(f'{$(date +%s.%N) - $1:.2f}')"; }
gpu_count() { nvidia-smi -L 2>/dev/null | wc -l; }
need_gpus() {  # need_gpus N SUITE
  local g; g=$(gpu_count)
  [ "$g" -ge "$1" ] && return 0
  echo "$2: skipped, needs $1 GPUs and the host has $g"; return 1
}
# bert_base_random: /tmp/bert-base-random, BERT-base with seeded random weights (transformers) and
# the uncased vocabulary.
bert_base_random() {
  [ -f /tmp/bert-base-random/config.json ] && return 0
  python3 -c "
import torch; from transformers import BertConfig, BertModel
torch.manual_seed(0); BertModel(BertConfig()).save_pretrained('/tmp/bert-base-random')" > /dev/null 2>&1
  cp data/bert-uncased-vocab/vocab.txt /tmp/bert-base-random/
}
anchor() {  # anchor BATCH [--compile]
  python3 "$ANCHOR" --model "$MODEL" --precision bf16 --batch "$@" 2>/dev/null | grep '^{'
}

# ---- suites ----------------------------------------------------------------------------------
suite_tests() {
  scripts/gpu_build.sh > "$D/ctest.log" 2>&1
  echo "tests: gpu_build with ctest exit $?"
  grep -E "tests passed|tests failed|\*\*\*Failed|\*\*\*Timeout" "$D/ctest.log" | head -20
  echo "tests: $(grep -c 'Not Run (Disabled)' "$D/ctest.log") disabled at configure (the reason is in ctest.log)"
}

suite_sweep() {
  rm -rf runs; local t0; t0=$(date +%s.%N)
  "$B/hpo" sweep configs/lr.yaml > "$D/sweep.log" 2>&1; local rc=$?
  echo "sweep: exit $rc, wall $(wall_since "$t0") s; complete $(grep -c COMPLETE "$D/sweep.log"),"\
       "pruned $(grep -c PRUNED "$D/sweep.log"); runs/ $(du -sh runs 2>/dev/null | cut -f1)"
  grep -E "^best trial" "$D/sweep.log" | tail -1
}

suite_trial() {
  bert_base_random
  local b v r t0 rc log
  for b in "${BATCHES[@]}"; do for r in $(seq "$REPEATS"); do for v in false auto; do
    log=$D/trial.$b.$v.$r.log; rm -rf /tmp/trial_out; t0=$(date +%s.%N)
    "$B/trainer" train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random \
      train.precision=bf16 train.batch_size="$b" train.cuda_graphs=$v output.checkpoint=false \
      output.dir=/tmp/trial_out > "$log" 2>&1; rc=$?
    echo "trial: batch $b graphs=$v run $r: exit $rc, wall $(wall_since "$t0") s |"\
         "$(grep -E '^eval' "$log" | tail -1 | cut -c1-90)"
    grep -E '^time|^graphs' "$log" | sed 's/^/  /'
  done; done; done
}

suite_warm() {
  bert_base_random
  local r t0 rc j
  for r in false true; do
    j=$D/warm-$r/journal.log; mkdir -p "$D/warm-$r"; rm -rf "runs/warm-$r"; t0=$(date +%s.%N)
    "$B/hpo" sweep configs/lr.yaml name="warm-$r" --journal "$j" \
      "trainer.overrides={train.epochs: 1, output.checkpoint: false, model.path: /tmp/bert-base-random, train.precision: bf16}" \
      "parameters.batch_size={values: [32]}" search.method=random \
      search.random.trials="${WARM_TRIALS:-6}" max_concurrent_trials=1 "early_terminate={type: none}" \
      resources.reuse_workers="$r" > "$D/warm.$r.log" 2>&1; rc=$?
    echo "warm: reuse_workers=$r: exit $rc, wall $(wall_since "$t0") s; $(grep -c COMPLETE "$D/warm.$r.log") complete"
    python3 bench/gpu/trial_seconds.py "$j" | sed 's/^/  /'
    grep -h '^time' "$(dirname "$j")"/logs/trial-*/rank-0.log 2>/dev/null | sed 's/^/  /'
  done
}

suite_telemetry() {
  bert_base_random
  local j=$D/telemetry/journal.log smi t0
  mkdir -p "$D/telemetry"; rm -rf runs/telemetry
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,power.draw,temperature.gpu \
    --format=csv,noheader,nounits -lms 500 > "$D/smi.csv" 2>/dev/null & smi=$!
  t0=$(date +%s.%N)
  "$B/hpo" sweep configs/lr.yaml name=telemetry --journal "$j" \
    "trainer.overrides={train.epochs: 1, output.checkpoint: false, model.path: /tmp/bert-base-random, train.precision: bf16}" \
    "parameters.batch_size={values: [32, 128]}" search.method=random search.random.trials=4 \
    max_concurrent_trials=1 "early_terminate={type: none}" > "$D/telemetry.log" 2>&1
  echo "telemetry: sweep exit $?, wall $(wall_since "$t0") s; $(grep -c COMPLETE "$D/telemetry.log") complete"
  kill $smi
  grep -E "^trial|GPU telemetry" "$D/telemetry.log" "$(dirname "$j")"/logs/agent.log | sed 's/^/  /'
  python3 bench/gpu/telemetry_check.py "$j" "$D/smi.csv" "$B/hpo"
  grep -h '^memory' "$(dirname "$j")"/logs/trial-*/rank-0.log 2>/dev/null | sed 's/^/  /'
  "$B/trainer" train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random \
    train.precision=bf16 train.batch_size=128 train.max_steps=60 output.checkpoint=false \
    output.save=none output.dir=/tmp/telemetry_trainer > "$D/trainer.log" 2>&1
  echo "telemetry: trainer bf16 batch 128, 60 steps: exit $?"
  grep -E '^step 60|^memory' "$D/trainer.log" | sed 's/^/  /'
}

suite_tasks() {
  bert_base_random
  local t v
  for t in "mnrl data/paws-wiki/dev.tsv paws" "classification data/sick/SICK.txt sick" \
           "nli data/sick/SICK.txt sick"; do
    set -- $t
    cat > "$D/task_$1.yaml" <<YAML
model: {path: /tmp/bert-base-random, pooling: mean, max_seq_len: 128, dropout: 0.1}
task: {type: $1, train: $PWD/$2, format: $3}
train: {precision: bf16}
YAML
    for v in false auto; do
      "$B/trainer" train --config "$D/task_$1.yaml" train.max_steps=150 train.batch_size=32 \
        train.eval_every_steps=0 train.log_every_steps=50 train.cuda_graphs=$v output.save=none \
        output.dir=/tmp/task_$1$v > "$D/train.$1.$v.log" 2>&1
      echo "tasks: $1 graphs=$v exit $?: $(grep -E '^step 150/' "$D/train.$1.$v.log" | cut -c1-110)"
    done
  done
}

suite_throughput() {
  OUT=$D bench/train_throughput_vs_anchor.sh "$ANCHOR" "$B/train_throughput_bench" "$MODEL" \
    "${BATCHES[@]}" > "$D/throughput.log" 2>&1
  echo "throughput: exit $?"; grep '^|' "$D/throughput.log"
}

suite_kernels() {
  local b k v
  for b in "${BATCHES[@]}"; do for k in fused aten; do for v in "fused --phases" graph; do
    # shellcheck disable=SC2086  # v is two words
    "$B/train_throughput_bench" --model "$MODEL" --precision bf16 --batch "$b" --kernels $k \
      --variant $v 2>&1 | tee -a "$D/kernels.jsonl" | python3 -c "
import json, sys
for l in sys.stdin:
    if not l.startswith('{'): print('kernels:', l.strip()); continue
    r = json.loads(l)
    print(f\"kernels: batch {r['batch_per_gpu']} {r['kernels']:5} {r['variant']:5} {r['samples_per_s']:9,.1f} samples/s, step {r['step_ms']} ms, phases {r['phases_ms']}\")"
  done; done; done
}

suite_profile() {
  local ncu b w
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  [ -x "$ncu" ] || { echo "profile: skipped, no ncu on this host"; return 0; }
  b=${BATCHES[-1]}
  for w in 1 2; do  # run B has one step more than run A
    "$ncu" --metrics gpu__time_duration.sum --csv --print-units base --cache-control none \
      --clock-control none "$B/train_throughput_bench" --model "$MODEL" --precision bf16 \
      --batch "$b" --variant fused --warmup $w --steps 1 > "$D/ncu-$w.csv" 2> "$D/ncu-$w.err"
    echo "profile: ncu run with --warmup $w: exit $?, $(grep -c gpu__time_duration "$D/ncu-$w.csv") kernels"
  done
  python3 bench/gpu/kernel_profile.py "$D/ncu-1.csv" "$D/ncu-2.csv" --json "$D/profile.json" ||
    tail -5 "$D/ncu-2.err" "$D/ncu-2.csv"
}

suite_load() {
  "$B/model_load_bench" --device cuda --repeats 3 --dir /tmp/model_load > "$D/load.log" 2>&1
  echo "load: exit $?"; tail -7 "$D/load.log"
}

suite_anchor() {
  local b
  for b in "${BATCHES[@]}"; do anchor "$b"; anchor "$b" --compile; done | tee "$D/anchor.jsonl"
}

suite_ddp() {
  need_gpus 2 ddp || return 0
  OUT=$D GPUS=$(gpu_count) bench/ddp_scaling_vs_anchor.sh "$ANCHOR" "$B/train_throughput_bench" \
    "$MODEL" "${BATCHES[@]}" > "$D/ddp.log" 2>&1
  echo "ddp: exit $?"; grep '^|' "$D/ddp.log"
}

suite_stall() {
  need_gpus 2 stall || return 0
  bert_base_random
  local args p0 p1 t rc
  args="train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.precision=bf16
        train.max_steps=100000 train.eval_every_steps=0 train.ddp_timeout_s=15 output.save=none
        output.checkpoint=false output.dir=/tmp/stall"
  rm -rf /tmp/stall
  MASTER_ADDR=127.0.0.1 MASTER_PORT=29777 WORLD_SIZE=2 RANK=1 LOCAL_RANK=1 "$B/trainer" $args > "$D/rank1.log" 2>&1 &
  p1=$!
  MASTER_ADDR=127.0.0.1 MASTER_PORT=29777 WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 "$B/trainer" $args > "$D/rank0.log" 2>&1 &
  p0=$!
  for _ in $(seq 240); do [ -s /tmp/stall/metrics.jsonl ] && break; sleep 0.5; done
  sleep 2; kill -STOP $p1; t=$(date +%s.%N)
  wait $p0; rc=$?
  echo "stall: rank 0 exited $rc $(wall_since "$t") s after the SIGSTOP of rank 1 (ddp_timeout_s 15):"\
       "$(grep error "$D/rank0.log" | tail -1 | cut -c1-200)"
  kill -9 $p1; wait $p1 2>/dev/null; sleep 1
  echo "stall: GPUs after: $(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader | tr '\n' ' ')"
}

suite_packing() {
  need_gpus 2 packing || return 0
  bert_base_random
  local G lrs s; G=$(gpu_count)
  lrs=$(python3 -c "print(', '.join(f'{(k + 1) * 1e-5:.1e}' for k in range($G)))")
  cat > "$D/train.yaml" <<YAML
model: {path: /tmp/bert-base-random, pooling: mean, max_seq_len: 128, dropout: 0.1}
task: {type: sts, train: $PWD/data/stsbenchmark/sts-train.csv, eval: $PWD/data/stsbenchmark/sts-dev.csv, format: stsb}
train: {epochs: 0, max_steps: 150, batch_size: 32, precision: bf16, eval_every_steps: 150, log_every_steps: 50}
output: {save: none, checkpoint: false}
YAML
  packing_sweep() {  # NAME GPUS_PER_TRIAL CONCURRENT LRS
    cat > "$D/$1.yaml" <<YAML
name: $1
metric: {name: eval/spearman, goal: maximize}
trainer: {config: $D/train.yaml}
resources: {gpus_per_trial: $2}
parameters: {lr: {values: [$4]}, batch_size: {values: [32]}}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: grid}
early_terminate: {type: none}
max_concurrent_trials: $3
max_failures_per_trial: 0
journal: $D/$1/journal.log
YAML
    ( while true; do nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader \
        >> "$D/smi-$1.txt" 2>/dev/null; sleep 1; done ) & s=$!
    local t0; t0=$(date +%s.%N)
    "$B/hpo" sweep "$D/$1.yaml" > "$D/$1.log" 2>&1
    echo "packing: $1: exit $?, wall $(wall_since "$t0") s; $(grep -c COMPLETE "$D/$1.log") complete;"\
         "GPUs seen per trainer pid: $(cut -d, -f1 "$D/smi-$1.txt" | sort -u | while read -r p; do
           grep "^$p," "$D/smi-$1.txt" | cut -d, -f2 | sort -u | wc -l; done | tr '\n' ' ')"
    kill $s
  }
  packing_sweep packed 1 "$G" "$lrs"
  packing_sweep serial 1 1 "$lrs"
  packing_sweep wide $((G / 2)) 2 "1.0e-4, 2.0e-4"
}

suite_zero1() {
  need_gpus 2 zero1 || return 0
  bert_base_random
  local g st log common
  g=$(gpu_count)
  common="--config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.devices=-1
          train.eval_every_steps=0 output.checkpoint=false"
  for st in ddp zero1; do
    rm -rf "/tmp/z1-fp32-$st"
    "$B/trainer" train $common train.strategy=$st train.precision=fp32 model.dropout=0 \
      train.shuffle=false train.max_steps=30 train.batch_size=16 train.cuda_graphs=false \
      train.log_every_steps=1 output.save=last output.dir="/tmp/z1-fp32-$st" > "$D/fp32-$st.log" 2>&1
    echo "zero1: fp32 $st on $g GPUs: exit $?"
  done
  python3 tests/integration/compare_runs.py /tmp/z1-fp32-ddp /tmp/z1-fp32-zero1 1e-5 2>&1 | sed 's/^/  fp32 ddp vs zero1: /'
  for st in ddp zero1; do
    log=$D/bf16-$st.log; rm -rf "/tmp/z1-bf16-$st"
    "$B/trainer" train $common train.strategy=$st train.precision=bf16 train.max_steps=150 \
      train.batch_size=32 train.cuda_graphs=true train.log_every_steps=50 output.save=none \
      output.dir="/tmp/z1-bf16-$st" > "$log" 2>&1
    echo "zero1: bf16 $st on $g GPUs: exit $?"
    grep -E '^(ranks|memory|ddp|zero1|steps|graphs|done|time)|^step 150/' "$log" | sed 's/^/  /'
  done
  for v in "" --compile; do
    echo "zero1: anchor torchrun x$g $v: $(torchrun --nproc_per_node="$g" "$ANCHOR" --model bert-base \
      --precision bf16 --batch 32 $v 2>/dev/null | grep '^{' | tail -1)"
  done
}

# real_run NAME TASK DEVICES BATCH [KEY=VALUE...]: one `trainer train` of ddp_real, its log in
# $D/NAME.log and a JSON line in $D/real.jsonl (the `time`, `graphs` and last step lines, wall).
real_run() {
  local name=$1 task=$2 n=$3 b=$4 t0 rc; shift 4
  local args=(--config configs/sbert_stsb.yaml train.epochs="${EPOCHS:-8}")
  [ "$task" = nli ] && args=(--config "$D/nli.yaml" train.epochs="${NLI_EPOCHS:-4}")
  rm -rf "/tmp/ddp_real/$name"; t0=$(date +%s.%N)
  env ${ENVS:-} "$B/trainer" train "${args[@]}" model.path=/tmp/bert-base-random train.precision=bf16 \
    train.batch_size="$b" train.devices="$n" train.eval_every_steps=0 train.log_every_steps=50 \
    output.checkpoint=false output.save=none output.dir="/tmp/ddp_real/$name" "$@" > "$D/$name.log" 2>&1
  rc=$?
  python3 - "$D/$name.log" "$name" "$task" "$n" "$b" "$rc" "$(wall_since "$t0")" "$*" >> "$D/real.jsonl" <<'PY'
import json, re, sys
log, name, task, n, b, rc, wall, extra = sys.argv[1:]
text = open(log, errors="replace").read()
def num(pattern, default=None):
    m = re.search(pattern, text, re.M)
    return float(m.group(1)) if m else default
steps = re.findall(r"^step \d+/\d+  samples (\d+) ", text, re.M)
print(json.dumps({"name": name, "task": task, "env": __import__("os").environ.get("ENVS", ""), "gpus": int(n), "batch": int(b), "exit": int(rc),
  "extra": extra, "wall_s": float(wall), "setup_s": num(r"^time +setup ([\d.]+) s"),
  "first_step_s": num(r"first step ([\d.]+) s"), "steps_s": num(r", steps ([\d.]+) s"),
  "capture_s": num(r"\(([\d.]+) s of it capturing"), "graphs": num(r"^graphs +(\d+) CUDA graphs"),
  "record_s": num(r"recording ([\d.]+) s"), "instantiate_s": num(r"instantiating ([\d.]+) s"), "upload_s": num(r"first replays ([\d.]+) s"),
  "samples": int(steps[-1]) if steps else None, "batch_global": int(b) * int(n),
  "eval": num(r"^eval step .*eval/(?:spearman|accuracy) ([\d.eE+-]+)"),
  "warnings": len(re.findall(r"destroy_process_group|has NOT been destroyed", text))}))
PY
  echo "ddp_real: $name: exit $rc, wall $(wall_since "$t0") s | $(grep -E '^time' "$D/$name.log" | cut -c1-150)"
}

# The runs of ddp_real beside the default ones, on the most GPUs: "TAG SETTING..." separated by
# ';'; a SETTING is a trainer override (train.x=y) or, in capitals, an environment variable.
DDP_REAL_VARIANTS=${VARIANTS:-"nogroup train.group_by_length=false;eager train.cuda_graphs=false;eager-nogroup train.cuda_graphs=false train.group_by_length=false"}

suite_ddp_real() {
  bert_base_random
  local G b n max s v
  G=$(gpu_count)
  local counts=(${DEVICES:-1 2 4})
  local use=()
  for n in "${counts[@]}"; do [ "$n" -le "$G" ] && use+=("$n"); done
  max=${use[-1]}
  cat > "$D/nli.yaml" <<YAML
model: {path: /tmp/bert-base-random, pooling: mean, max_seq_len: 128, dropout: 0.1}
task: {type: nli, train: $PWD/data/sick/SICK.txt, format: sick}
train: {precision: bf16}
YAML
  touch "$D/real.jsonl"
  for b in "${BATCHES[@]}"; do
    if [ "${DEFAULTS:-1}" = 1 ]; then
      for n in "${use[@]}"; do real_run "sts-b$b-g$n" sts "$n" "$b"; done
    fi
    local IFS_=$IFS; IFS=';'; local variants=($DDP_REAL_VARIANTS) every=(${VARIANTS_ALL:-}); IFS=$IFS_
    for v in "${every[@]}" "${variants[@]}"; do
      set -- $v; [ $# -gt 0 ] || continue
      local tag=$1 envs=() sets=() on=("$max"); shift
      for s in "$@"; do if [[ $s =~ ^[A-Z_0-9]+= ]]; then envs+=("$s"); else sets+=("$s"); fi; done
      [[ " ${every[*]} " == *" $v "* ]] && on=("${use[@]}")
      for n in "${on[@]}"; do
        ENVS="${envs[*]}" real_run "sts-b$b-g$n-$tag" sts "$n" "$b" "${sets[@]}"
      done
    done
  done
  if [ "${NLI:-1}" = 1 ]; then
    for b in "${BATCHES[@]}"; do
      for n in 1 "$max"; do real_run "nli-b$b-g$n" nli "$n" "$b"; done
    done
  fi
  for s in ${QUALITY_SEEDS-1 2}; do
    real_run "quality-seed$s" sts "$max" "${BATCHES[0]}" train.seed="$s"
    real_run "quality-seed$s-nogroup" sts "$max" "${BATCHES[0]}" train.seed="$s" train.group_by_length=false
  done
  python3 bench/gpu/ddp_real_table.py "$D/real.jsonl" "$D/anchor.jsonl" | tee "$D/table.md"
}

# hf_ddp_anchor.py, eager and compiled, on ANCHOR_GPUS (1 and every GPU) GPUs for ANCHOR_EPOCHS
# (8) epochs, into ddp_real's folder: its table shows them beside trainer train's runs.
suite_ddp_anchor() {
  bert_base_random
  local b n v G
  G=$(gpu_count)
  D=$O/ddp_real; mkdir -p "$D"
  for b in "${BATCHES[@]}"; do for n in ${ANCHOR_GPUS:-1 $G}; do for v in ${ANCHOR_VARIANTS:-eager compile}; do
    [ "$v" = eager ] && v=""
    echo "ddp_anchor: $n GPU(s) batch $b ${v:-eager}: $(torchrun --standalone --nproc_per_node="$n" \
      .carry/anchor/hf_ddp_anchor.py /tmp/bert-base-random "$PWD/data" "$b" "${ANCHOR_EPOCHS:-8}" $v \
      2>"$D/anchor-$n-$b-${v:-eager}.err" | grep '^{' | tee -a "$D/anchor.jsonl")"
  done; done; done
  [ -f "$D/real.jsonl" ] && python3 bench/gpu/ddp_real_table.py "$D/real.jsonl" "$D/anchor.jsonl" | tee "$D/table.md"
}

suite_ddp_sweep() {
  need_gpus 2 ddp_sweep || return 0
  bert_base_random
  local G n r t0 rc name lrs
  G=$(gpu_count)
  cat > "$D/train.yaml" <<YAML
model: {path: /tmp/bert-base-random, pooling: mean, max_seq_len: 128, dropout: 0.1}
task: {type: sts, train: $PWD/data/stsbenchmark/sts-train.csv, eval: $PWD/data/stsbenchmark/sts-dev.csv, format: stsb}
train: {epochs: ${SWEEP_EPOCHS:-2}, batch_size: 32, precision: bf16, eval_every_epochs: 1, log_every_steps: 50}
output: {save: none, checkpoint: false}
YAML
  lrs=$(python3 -c "print(', '.join(f'{(k + 1) * 1e-5:.1e}' for k in range(${SWEEP_TRIALS:-4})))")
  for n in ${SWEEP_GPUS:-2 $G}; do
    [ "$n" -le "$G" ] || continue
    rm -rf /tmp/ddp_sweep_out; t0=$(date +%s.%N)
    "$B/trainer" train --config "$D/train.yaml" train.devices="$n" output.dir=/tmp/ddp_sweep_out \
      > "$D/train-g$n.log" 2>&1; rc=$?
    echo "ddp_sweep: trainer train devices=$n: exit $rc, wall $(wall_since "$t0") s |"\
         "$(grep -E '^time' "$D/train-g$n.log" | cut -c1-150)"
    for r in ${SWEEP_REUSE:-true false}; do
      name=g$n-reuse-$r
      cat > "$D/$name.yaml" <<YAML
name: $name
metric: {name: eval/spearman, goal: maximize}
trainer: {config: $D/train.yaml}
resources: {gpus_per_trial: $n, reuse_workers: $r, worker_max_trials: ${SWEEP_WORKER_MAX_TRIALS:-16}}
parameters: {lr: {values: [$lrs]}, batch_size: {values: [32]}}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: grid}
early_terminate: {type: none}
max_concurrent_trials: $((G / n))
max_failures_per_trial: 0
journal: $D/$name/journal.log
YAML
      t0=$(date +%s.%N)
      "$B/hpo" sweep "$D/$name.yaml" > "$D/$name.log" 2>&1; rc=$?
      echo "ddp_sweep: $name: exit $rc, wall $(wall_since "$t0") s; $(grep -c COMPLETE "$D/$name.log") complete"
      python3 bench/gpu/trial_seconds.py "$D/$name/journal.log" | sed 's/^/  /'
      for f in "$D/$name"/logs/trial-*/rank-0.log; do
        echo "  $(basename "$(dirname "$f")"): $(grep -E '^group' "$f" | cut -c10-120) |"\
             "$(grep -E '^time' "$f" | cut -c1-120)"
      done
      echo "  warnings in workers' logs: $(cat "$D/$name"/logs/workers/*.log 2>/dev/null |
        grep -ciE 'warn|error|destroy_process_group')"
    done
  done
}

suite_crossenc() {
  python3 data/golden/make_cross_encoder_goldens.py "$D/cross_encoder_goldens.json" > "$D/goldens.log" 2>&1
  echo "crossenc: cross-encoder goldens exit $?"; tail -3 "$D/goldens.log"
  cp data/golden/cross_encoder_head*.safetensors "$D/" 2>/dev/null
  python3 data/golden/make_sbert_goldens.py "$D/sbert_goldens.json" > "$D/sbert_goldens.log" 2>&1
  echo "crossenc: sbert goldens exit $?"
  rm -rf /tmp/ce_run
  "$B/trainer" train --config configs/reranker_stsb.yaml train.max_steps=60 train.eval_every_steps=30 \
    output.dir=/tmp/ce_run > "$D/ce_train.log" 2>&1
  echo "crossenc: train exit $? | $(grep -E '^done' "$D/ce_train.log")"
  head -32 data/stsbenchmark/sts-dev.csv | cut -f6,7 > /tmp/ce_pairs.tsv
  "$B/trainer" predict --model /tmp/ce_run/model < /tmp/ce_pairs.tsv > /tmp/ce_pred.jsonl 2>> "$D/ce_train.log"
  python3 tests/gpu/cross_encoder_check.py /tmp/ce_run/model /tmp/ce_pairs.tsv /tmp/ce_pred.jsonl \
    > "$D/ce_check.log" 2>&1
  echo "crossenc: check exit $?"; grep -E "diff|check:|FAIL" "$D/ce_check.log"
  bert_base_random
  local b log
  for b in "${BATCHES[@]}"; do
    log=$D/ce_speed.$b.log; rm -rf /tmp/ce_speed
    "$B/trainer" train --config configs/reranker_stsb.yaml model.path=/tmp/bert-base-random \
      train.precision=bf16 train.batch_size="$b" train.max_steps=100 train.eval_every_steps=0 \
      output.save=none output.checkpoint=false output.dir=/tmp/ce_speed > "$log" 2>&1
    echo "crossenc: tunefleet batch $b: exit $? | $(grep -E '^step 100/' "$log" | grep -oE '[0-9.]+ samples/s')"
    grep -E '^time|^graphs' "$log" | sed 's/^/  /'
  done
  python3 bench/gpu/st_cross_encoder_reference.py "${BATCHES[@]}" 2> "$D/st_speed.log" | sed 's/^/crossenc: /'
}

suite_multinode() {
  need_gpus 4 multinode || return 0
  if ! command -v ip >/dev/null; then
    mkdir -p /tmp/iproute2
    for f in .carry/iproute2/*.deb; do dpkg-deb -x "$f" /tmp/iproute2 2>/dev/null || dpkg -x "$f" /tmp/iproute2; done
    export PATH=/tmp/iproute2/usr/bin:/tmp/iproute2/bin:/tmp/iproute2/sbin:/tmp/iproute2/usr/sbin:$PATH
    export LD_LIBRARY_PATH=/tmp/iproute2/usr/lib/x86_64-linux-gnu:/tmp/iproute2/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
  fi
  echo "multinode: ip is $(command -v ip) ($(ip -V 2>&1 | head -1))"
  tests/integration/multinode_trial_test.sh "$B/head" "$B/agent" "$B/hpo" "$B/trainer" \
    > "$D/multinode.log" 2>&1
  echo "multinode: exit $?"; grep -vE "^\s*$" "$D/multinode.log" | tail -15
}

# ---- build once, then the suites -------------------------------------------------------------
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  SKIP_TESTS=1 scripts/gpu_build.sh > "$O/build.log" 2>&1; rc=$?
  echo "build: scripts/gpu_build.sh exit $rc"
  [ $rc -eq 0 ] || { grep -E "error|FAILED" "$O/build.log" | head -8; exit 1; }
fi
for s in "$@"; do
  D=$O/$s; mkdir -p "$D"
  "suite_$s"
done
