#!/usr/bin/env bash
# The step lines' samples/s against the wall clock (issue 31, acceptance 3): `trainer train` on
# one rank and on two (train.devices=2: Gloo on CPUs, NCCL on GPUs), a line every 5 steps, no
# evaluation until the end. A reader stamps each step line as it arrives; each line's samples
# (samples_seen's rise since the line before, across all ranks) over its samples/s is the time
# the trainer says the line took. Over the run those times must add up to the time between the
# lines' arrivals within 15%, and no single line may be off by more than a factor of 2: a rate
# read before the device has finished its steps (CUDA graphs let the host run ahead) fails.
# Args: trainer binary.
TRAINER=$1
source tests/integration/lib.sh

check_speed() {  # check_speed NAME ARGS...: runs the trainer, checks its step lines
  local name=$1; shift
  "$TRAINER" train --config "$WORK/train.yaml" output.dir="$WORK/$name" "$@" 2>&1 |
    "$PY" -u -c '
import re, sys, time
for line in sys.stdin:
    print(f"{time.monotonic():.6f} {line}", end="", flush=True)' > "$WORK/$name.log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { fail "$name: trainer exited $rc: $(tail -3 "$WORK/$name.log")"; return; }
  "$PY" - "$WORK/$name.log" "$name" <<'PY' || fail "$name: the step lines' samples/s disagree with the wall clock"
import re, sys
rows = []
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) step (\d+)/\d+  samples (\d+) .*  (\d+) samples/s", line)
    if m:
        rows.append((float(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))))
if len(rows) < 6:
    sys.exit(f"only {len(rows)} step lines")
said = seen = 0.0
bad = []
for (t0, _, s0, _), (t1, step, s1, rate) in zip(rows, rows[1:]):
    claimed = (s1 - s0) / rate if rate > 0 else float("inf")
    observed = t1 - t0
    said += claimed
    seen += observed
    if observed > 0.02 and not 0.5 <= claimed / observed <= 2.0:
        bad.append(f"step {step}: {claimed:.3f} s said, {observed:.3f} s seen")
print(f"{sys.argv[2]}: {len(rows) - 1} lines, {said:.2f} s by their samples/s, {seen:.2f} s between them"
      f" (ratio {said / seen:.3f})")
if bad or not 0.85 <= said / seen <= 1.15:
    sys.exit("; ".join(bad[:5]) or "the totals differ")
PY
}

write_train_yaml "$WORK/train.yaml" train.max_steps=60 train.batch_size=16 train.log_every_steps=5 \
  train.eval_every_steps=0
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
check_speed one
if [ "$GPUS" -ge 2 ] || [ "$GPUS" -eq 0 ]; then
  check_speed two train.devices=2 train.batch_size=8
  grep -qiE "destroy_process_group|has NOT been destroyed" "$WORK/two.log" &&
    fail "two: a rank warned about its process group at exit"
fi
finish
