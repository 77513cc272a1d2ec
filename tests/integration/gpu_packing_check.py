#!/usr/bin/env python3
"""Samples and checks which trainer process holds which GPU (tests/integration/gpu_packing_test.sh).

  gpu_packing_check.py sample SWEEP OUT STOP
      Every 50 ms until the file STOP exists: every process whose environment says
      TUNEFLEET_SWEEP=SWEEP (the agent's trainers of that sweep), as one JSON line per sample:
      [[pid, run_id, rank, CUDA_VISIBLE_DEVICES], ...] (empty samples are not written).
  gpu_packing_check.py check OUT RANKS_PER_TRIAL TRIALS GPUS
      Checks the samples: at no moment two trainers on one GPU, or a trainer with other than
      exactly one GPU; each run has RANKS_PER_TRIAL ranks on distinct GPUs; TRIALS runs in all;
      at some moment every one of the GPUS GPUs busy. Prints the figures; exit 1 on a failure.
"""
import json
import os
import sys
import time


def environ(pid):
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def sample(sweep, out, stop):
    with open(out, "w") as f:
        while not os.path.exists(stop):
            rows = []
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                env = environ(pid)
                if env is None or env.get("TUNEFLEET_SWEEP") != sweep:
                    continue
                rows.append([int(pid), env.get("TUNEFLEET_RUN_ID", ""), env.get("RANK", ""),
                             env.get("CUDA_VISIBLE_DEVICES")])
            if rows:
                f.write(json.dumps(sorted(rows)) + "\n")
                f.flush()
            time.sleep(0.05)


def check(out, ranks_per_trial, trials, gpus):
    failures = []
    samples = [json.loads(line) for line in open(out) if line.strip()]
    runs = {}  # run id -> {rank: set of GPU strings seen}
    max_busy = 0
    for rows in samples:
        holder = {}
        for pid, run, rank, visible in rows:
            if visible is None or "," in visible or visible == "":
                failures.append("pid %d (run %s rank %s) has CUDA_VISIBLE_DEVICES=%r, not one GPU"
                                % (pid, run, rank, visible))
                continue
            if visible in holder:
                failures.append("GPU %s held by pids %d and %d at once" % (visible, holder[visible], pid))
            holder[visible] = pid
            runs.setdefault(run, {}).setdefault(rank, set()).add(visible)
        max_busy = max(max_busy, len(holder))
    for run, ranks in sorted(runs.items()):
        if len(ranks) != ranks_per_trial:
            failures.append("run %s: ranks %s seen, want %d" % (run, sorted(ranks), ranks_per_trial))
        seen = [g for gpus_of_rank in ranks.values() for g in gpus_of_rank]
        if any(len(g) != 1 for g in ranks.values()) or len(set(seen)) != len(seen):
            failures.append("run %s: its ranks do not each hold one distinct GPU: %s" % (run, ranks))
    if len(runs) != trials:
        failures.append("%d runs seen, want %d" % (len(runs), trials))
    if max_busy != gpus:
        failures.append("at most %d GPUs busy at once, want %d" % (max_busy, gpus))
    print("samples %d, runs %d, most GPUs busy at once %d of %d; GPUs per run: %s" % (
        len(samples), len(runs), max_busy, gpus,
        "; ".join("%s: %s" % (run, ",".join(sorted(g for s in r.values() for g in s)))
                  for run, r in sorted(runs.items()))))
    for f in failures[:10]:
        print("FAIL: " + f)
    return 1 if failures else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "sample":
        sample(*sys.argv[2:])
        return 0
    if len(sys.argv) == 6 and sys.argv[1] == "check":
        return check(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
