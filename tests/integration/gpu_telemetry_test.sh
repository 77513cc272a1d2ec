#!/usr/bin/env bash
# GPU telemetry (issue 20, acceptance 2) on a machine without GPUs: the fake CUDA driver gives
# the agent 2 GPUs and the fake NVML (tests/launcher/fake_libnvml.cc) fixed figures per GPU:
# GPU G is at 10*(G+1) % utilisation, uses 1000+100*G MiB and draws 100+10*G W.
# hpo's dev mode runs 4 synthetic trials, 2 at a time; each trial's journal must hold the
# figures of the GPU its placement names: gpu_util_mean and gpu_mem_peak_mib exactly, and
# gpu_energy_j within 0.5 s of power x its duration. hpo's trial lines show them too. Then the
# same sweep without the library: the agent says so once, the trials carry no telemetry. The
# sweep's HTML report shows the telemetry, or says there is none.
# Args: hpo binary, the fake libcuda.so.1, the fake libnvidia-ml.so.1 (same folder).
HPO=$1 FAKE_CUDA=$2 FAKE_NVML=$3
source tests/integration/lib.sh

FAKES="$(dirname "$(readlink -f "$FAKE_CUDA")")"
[ "$FAKES" = "$(dirname "$(readlink -f "$FAKE_NVML")")" ] || { fail "the fakes are not in one folder"; finish; }
export TUNEFLEET_FAKE_GPUS=2

# sweep NAME LIBRARY_PATH: 4 synthetic trials of 12 x 0.3 s on 1 GPU each, 2 at a time.
sweep() {
  cat > "$WORK/$1.yaml" <<YAML
name: telemetry-$1
metric: {name: eval/spearman, goal: maximize}
trainer: {synthetic: {steps: 12, seconds_per_step: 0.3, noise: 0.0, seed: 0}}
resources: {gpus_per_trial: 1}
parameters:
  lr: {values: [1.0e-5, 3.0e-5, 1.0e-4, 3.0e-4]}
  batch_size: {values: [32]}
lr_scaling: {rule: linear, base_batch: 32}
search: {method: grid}
early_terminate: {type: none}
max_concurrent_trials: 2
max_failures_per_trial: 0
journal: $WORK/$1/journal.log
YAML
  LD_LIBRARY_PATH="$2${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$HPO" sweep "$WORK/$1.yaml" > "$WORK/$1.log" 2>&1 ||
    fail "$1: hpo sweep exited $?: $(tail -3 "$WORK/$1.log")"
}

sweep nvml "$FAKES"
cat "$WORK/nvml.log"
grep -q "GPU telemetry: sampling 2 GPU(s) through NVML" "$WORK/nvml/logs/agent.log" ||
  fail "the agent did not start its telemetry: $(grep -i "telemetry\|GPU" "$WORK/nvml/logs/agent.log" | head -3)"
"$HPO" status --journal "$WORK/nvml/journal.log" --format json > "$WORK/nvml.json"
"$PY" - "$WORK/nvml.json" <<'PY' || fail "the journal's telemetry: see above"
import datetime, json, sys
trials = json.load(open(sys.argv[1]))["trials"]
bad = 0
if len(trials) != 4: print(f"want 4 trials, got {len(trials)}"); bad += 1
for t in trials:
    a = t["user_attrs"]
    gpu = int(a["placement"].split(":")[1])
    start = datetime.datetime.fromisoformat(t["datetime_start"])
    end = datetime.datetime.fromisoformat(t["datetime_complete"])
    seconds = (end - start).total_seconds()
    watts = 100 + 10 * gpu
    print(f"trial {t['number']} on GPU {gpu}, {seconds:.1f} s: util {a.get('gpu_util_mean')}, "
          f"peak {a.get('gpu_mem_peak_mib')} MiB, {a.get('gpu_energy_j')} J (power x time {watts * seconds:.0f} J)")
    if t["state"] != "COMPLETE": print("  not COMPLETE"); bad += 1
    if a.get("gpu_util_mean") != 10 * (gpu + 1): print("  wrong gpu_util_mean"); bad += 1
    if a.get("gpu_mem_peak_mib") != 1000 + 100 * gpu: print("  wrong gpu_mem_peak_mib"); bad += 1
    if abs(a.get("gpu_energy_j", -1e9) - watts * seconds) > 0.5 * watts:
        print("  gpu_energy_j is not power x time within 0.5 s"); bad += 1
sys.exit(1 if bad else 0)
PY
[ "$(grep -cE '^trial [0-9]+ COMPLETE .*  gpu (10|20)% 1\.[01] GiB [0-9.]+ kJ  on local:[01]$' "$WORK/nvml.log")" -eq 4 ] ||
  fail "hpo's trial lines do not show the telemetry: $(grep '^trial' "$WORK/nvml.log")"

# The sweep's HTML report (hpo/report/report.h), beside its journal: every trial, the telemetry, no URL.
html="$WORK/nvml/journal.html"
[ -f "$html" ] || fail "no report beside the journal"
for n in 0 1 2 3; do grep -q "id=\"trial-$n\"" "$html" || fail "the report lacks trial $n"; done
grep -q "No GPU telemetry was recorded" "$html" && fail "the report says no telemetry was recorded"
grep -q "://" "$html" && fail "the report references something outside itself"

# Without libnvidia-ml.so.1: only the fake driver on the library path.
mkdir -p "$WORK/cuda_only"
cp "$FAKE_CUDA" "$WORK/cuda_only/libcuda.so.1"
sweep none "$WORK/cuda_only"
# (A host with a real NVML finds it elsewhere, but not the fake GPUs: the agent says that instead.)
[ "$(grep -cE "no GPU telemetry \((libnvidia-ml.so.1 not found|GPU 0: NVML has no GPU at PCI bus id '0000:01:00.0'.*)\); trials run without it" "$WORK/none/logs/agent.log")" -eq 1 ] ||
  fail "the agent did not say once that NVML is absent: $(grep -i telemetry "$WORK/none/logs/agent.log")"
[ "$(pyq "$WORK/none/journal.log" "sum('gpu_util_mean' in t['user_attrs'] for t in T)")" -eq 0 ] ||
  fail "trials without NVML carry telemetry"
[ "$(count_state "$WORK/none/journal.log" COMPLETE)" -eq 4 ] || fail "without NVML, not 4 trials complete"
grep -q "No GPU telemetry was recorded" "$WORK/none/journal.html" ||
  fail "without NVML, the report does not say that no telemetry was recorded"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
