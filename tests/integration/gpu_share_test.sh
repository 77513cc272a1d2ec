#!/usr/bin/env bash
# Several trials per GPU (issue 36, acceptance 2) on a machine without GPUs: the fake CUDA driver
# gives the agent 1 GPU and the fake NVML (tests/launcher/fake_libnvml.cc) says it has 10000 MiB
# of which 1000 are used. hpo's dev mode runs synthetic trials of 12 x 0.25 s with
# resources.trials_per_gpu: 4 (max_concurrent_trials 4); each trial declares its memory
# (trainer.synthetic.memory_mib, as a real trial sends the trainer's estimate). Each trial
# reserves its estimate + 768 MiB of context, and 512 MiB stay free (launcher/agent/gpu_share.h):
#   small: 1000 MiB a trial: 4 fit (4 x 1768 + 512 < 9000), so 4 run at once, and they split
#          the GPU's energy (each is credited its share of it);
#   large: 2500 MiB a trial: 2 fit (3 x 3268 + 512 > 9000), so never more than 2, and the agent
#          says why the third waits;
#   oom:   1000 MiB, but a trial that starts beside another runs out of memory (exit code 3):
#          hpo runs each such trial again alone (trials_per_gpu 1): every trial COMPLETE, none
#          FAIL, the re-run ones marked requeued_alone, and no other trainer beside them;
#   mps:   with a (fake) nvidia-cuda-mps-control on PATH and the agent on the host's GPU "1": see
#          below.
# Every trainer of the sweep is sampled from /proc every 50 ms (gpu_packing_check.py sample).
# Args: hpo binary, the fake libcuda.so.1, the fake libnvidia-ml.so.1, gpu_packing_check.py.
HPO=$1 FAKE_CUDA=$2 FAKE_NVML=$3 CHECK=$4
source tests/integration/lib.sh

FAKES="$(dirname "$(readlink -f "$FAKE_CUDA")")"
[ "$FAKES" = "$(dirname "$(readlink -f "$FAKE_NVML")")" ] || { fail "the fakes are not in one folder"; finish; }
export LD_LIBRARY_PATH="$FAKES${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TUNEFLEET_FAKE_GPUS=1 TUNEFLEET_FAKE_NVML_TOTAL_MIB=10000

# sweep NAME MEMORY_MIB OOM LRS: runs it while sampling its trainers.
sweep() {
  cat > "$WORK/$1.yaml" <<YAML
name: share-$1
metric: {name: eval/spearman, goal: maximize}
trainer: {synthetic: {steps: 12, seconds_per_step: 0.25, noise: 0.0, seed: 0, memory_mib: $2, oom_when_shared: $3}}
resources: {trials_per_gpu: 4}
parameters:
  lr: {values: [$4]}
  batch_size: {values: [32]}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: grid}
early_terminate: {type: none}
max_concurrent_trials: 4
max_failures_per_trial: 0
journal: $WORK/$1/journal.log
YAML
  rm -f "$WORK/$1.stop"
  "$PY" "$CHECK" sample "share-$1" "$WORK/$1.samples" "$WORK/$1.stop" &
  local sampler=$!
  "$HPO" sweep "$WORK/$1.yaml" > "$WORK/$1.log" 2>&1 || fail "$1: hpo sweep exited $?: $(tail -3 "$WORK/$1.log")"
  touch "$WORK/$1.stop"
  wait "$sampler"
}

# most NAME: the most trainers of the sweep seen at once (all on GPU 0).
most() {
  "$PY" - "$WORK/$1.samples" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [r for s in rows for r in s if r[3] != "0"]
print(-1 if bad else max((len(s) for s in rows), default=0))
PY
}

LRS8="1.0e-5, 2.0e-5, 3.0e-5, 5.0e-5, 1.0e-4, 2.0e-4, 3.0e-4, 5.0e-4"
sweep small 1000 false "$LRS8"
[ "$(count_state "$WORK/small/journal.log" COMPLETE)" -eq 8 ] || fail "small: not 8 trials COMPLETE"
[ "$(most small)" -eq 4 ] || fail "small: want 4 trainers at once on GPU 0, saw $(most small)"
grep -q "up to 4 trials a GPU" "$WORK/small.log" || fail "small: hpo does not say trials share GPUs"
# The trials split the GPU's energy (100 W on the fake NVML): together they are credited about
# what the GPU drew while any of them ran, not 4 times it. The bound is 1.3 x: each trial's energy
# runs from its agent's first to last telemetry sample, which on a loaded 2-core CI machine may
# reach a sample interval past the journal's start and end times (CI saw 767 J against 691 J).
"$HPO" status --journal "$WORK/small/journal.log" --format json > "$WORK/small.json"
"$PY" - "$WORK/small.json" <<'PY' || fail "small: the trials' energy is not the GPU's, shared"
import datetime, json, sys
trials = json.load(open(sys.argv[1]))["trials"]
t = lambda s: datetime.datetime.fromisoformat(s)
wall = (max(t(x["datetime_complete"]) for x in trials) - min(t(x["datetime_start"]) for x in trials)).total_seconds()
energy = sum(x["user_attrs"].get("gpu_energy_j", 0) for x in trials)
print(f"8 trials: {energy:.0f} J together; the GPU at 100 W over the sweep's {wall:.1f} s: {100 * wall:.0f} J")
sys.exit(0 if 0 < energy <= 100 * wall * 1.3 else 1)
PY

sweep large 2500 false "$LRS8"
[ "$(count_state "$WORK/large/journal.log" COMPLETE)" -eq 8 ] || fail "large: not 8 trials COMPLETE"
[ "$(most large)" -eq 2 ] || fail "large: want at most (and at some moment) 2 trainers at once, saw $(most large)"
grep -q "waits: GPU 0's memory: needs 3.69 GiB (estimate 2.44 + context 0.75 + margin 0.50)" "$WORK/large/logs/agent.log" ||
  fail "large: the agent does not say why a trial waits: $(grep waits "$WORK/large/logs/agent.log" | head -2)"

sweep oom 1000 true "1.0e-5, 3.0e-5, 1.0e-4, 3.0e-4"
cat "$WORK/oom.log"
[ "$(count_state "$WORK/oom/journal.log" COMPLETE)" -eq 4 ] || fail "oom: not 4 trials COMPLETE"
[ "$(count_state "$WORK/oom/journal.log" FAIL)" -eq 0 ] || fail "oom: a trial FAILed"
alone=$(grep -c "ran out of GPU memory sharing a GPU (out of memory (rank 0) on local); running it again alone" "$WORK/oom.log")
[ "$alone" -ge 1 ] || fail "oom: no trial was run again alone"
[ "$(pyq "$WORK/oom/journal.log" "sum(t['user_attrs'].get('requeued_alone') is True for t in T)")" -eq "$alone" ] ||
  fail "oom: the journal does not mark the $alone re-run trial(s) requeued_alone"
# A re-run trial's trainer (TUNEFLEET_GPU_TRIALS=1 and no OOM) never has company: each sample
# with more than one trainer holds only trials that started beside another, i.e. exited at once.
"$PY" - "$WORK/oom.samples" "$WORK/oom/logs/agent.log" <<'PY' || fail "oom: a trial re-run alone had company"
import json, re, sys
starts = {}
for line in open(sys.argv[2]):
    m = re.search(r"run (\d+) \(trial (\d+)\): started", line)
    if m: starts.setdefault(m.group(2), []).append(m.group(1))
rerun = {runs[-1] for runs in starts.values() if len(runs) > 1}
bad = 0
for s in (json.loads(l) for l in open(sys.argv[1]) if l.strip()):
    ids = {r[1] for r in s}
    if len(ids) > 1 and ids & rerun: print("company:", sorted(ids)); bad += 1
print(f"{len(rerun)} trial(s) re-run alone; {bad} sample(s) with company")
sys.exit(1 if bad or not rerun else 0)
PY
# mps: where nvidia-cuda-mps-control is on PATH (a fake one here, recording how it is run), the
# agent starts its daemon once, on the agent's GPUs (CUDA_VISIBLE_DEVICES as the agent has it:
# "1", the second GPU of a host), runs the sharing trials as its clients naming their GPU as the
# MPS server numbers it ("0"; the host's "1" hung real clients), and tells it to quit at exit.
# Dev mode asks for the server at once, before any trial (start_server).
mkdir -p "$WORK/mpsbin"
cat > "$WORK/mpsbin/nvidia-cuda-mps-control" <<'SH'
#!/bin/sh
if [ "$1" = "-d" ]; then
  echo "daemon CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} pipe=${CUDA_MPS_PIPE_DIRECTORY:+set}" >> "$MPS_RECORD"
else
  echo "command $(cat)" >> "$MPS_RECORD"
fi
SH
chmod +x "$WORK/mpsbin/nvidia-cuda-mps-control"
export MPS_RECORD="$WORK/mps.record" PATH="$WORK/mpsbin:$PATH" CUDA_VISIBLE_DEVICES=1
sweep mps 1000 false "1.0e-5, 3.0e-5, 1.0e-4, 3.0e-4"
cat "$MPS_RECORD"
[ "$(count_state "$WORK/mps/journal.log" COMPLETE)" -eq 4 ] || fail "mps: not 4 trials COMPLETE"
grep -q "CUDA MPS: started its control daemon" "$WORK/mps/logs/agent.log" || fail "mps: the agent does not say it started MPS"
[ "$(grep -c '^daemon CUDA_VISIBLE_DEVICES=1 pipe=set$' "$MPS_RECORD")" -eq 1 ] ||
  fail "mps: want one daemon on the agent's GPU 1 with its pipe folder: $(cat "$MPS_RECORD")"
grep -q "^command quit$" "$MPS_RECORD" || fail "mps: the agent did not tell its daemon to quit"
# Dev mode's agent starts the daemon's server at once (agent --prewarm_mps), right after the daemon.
[ "$(sed -n 2p "$MPS_RECORD")" = "command start_server -uid $(id -u)" ] ||
  fail "mps: want start_server for this user right after the daemon: $(cat "$MPS_RECORD")"
grep -q "CUDA MPS: started its server in" "$WORK/mps/logs/agent.log" || fail "mps: the agent does not say it started the server"
[ "$(most mps)" -eq 4 ] || fail "mps: want 4 clients at once, each naming the server's GPU 0, saw $(most mps)"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
