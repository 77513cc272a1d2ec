#!/usr/bin/env python3
"""Checks and times a sweep of many short trials from its Optuna journal (written by hpo), without
Optuna: every trial ended COMPLETE, the trial numbers are 0..N-1 once each, no two trials share
their params (the random sampler's points), and the completion rate of the first and the last
WINDOW trials (by their datetime_complete). Prints one JSON line; exits 1 when a check fails or
the last window's rate is below MIN_RATIO of the first's.
Usage: sweep_load_check.py JOURNAL EXPECTED_TRIALS [WINDOW] [MIN_RATIO]"""
import datetime
import json
import sys

path, expected = sys.argv[1], int(sys.argv[2])
window = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
min_ratio = float(sys.argv[4]) if len(sys.argv) > 4 else 0.8
created, params, state, done = 0, {}, {}, []
start = None
with open(path) as f:
    for line in f:
        op = json.loads(line)
        code = op.get("op_code")
        if code == 4:  # CREATE_TRIAL: ids in creation order
            if start is None:
                start = datetime.datetime.fromisoformat(op["datetime_start"])
            params[created] = {}
            created += 1
        elif code == 5:  # SET_TRIAL_PARAM
            params[op["trial_id"]][op["param_name"]] = op["param_value_internal"]
        elif code == 6 and op.get("state") in (1, 2, 3):
            tid = op["trial_id"]
            if tid in state:
                state[tid] = "TWICE"
            else:
                state[tid] = {1: "COMPLETE", 2: "PRUNED", 3: "FAIL"}[op["state"]]
            done.append(datetime.datetime.fromisoformat(op["datetime_complete"]))
problems = []
if created != expected:
    problems.append(f"{created} trials created, {expected} expected")
bad = {t: s for t, s in state.items() if s != "COMPLETE"}
if bad:
    problems.append(f"{len(bad)} trials not COMPLETE once, e.g. {sorted(bad.items())[:3]}")
missing = [t for t in range(created) if t not in state]
if missing:
    problems.append(f"{len(missing)} trials never ended, e.g. {missing[:5]}")
points = {json.dumps(p, sort_keys=True) for p in params.values()}
if len(points) != len(params):
    problems.append(f"{len(params) - len(points)} trials repeat another's params")
done.sort()
rate = lambda ts: (len(ts) - 1) / max((ts[-1] - ts[0]).total_seconds(), 1e-6)
window = min(window, len(done) // 2)
first = rate(done[:window]) if window > 1 else 0.0
last = rate(done[-window:]) if window > 1 else 0.0
total = (done[-1] - start).total_seconds() if done and start else 0.0
ratio = last / first if first > 0 else 0.0
if window > 1 and ratio < min_ratio:
    problems.append(f"the last {window} trials ran at {last:.1f}/s, {ratio:.0%} of the first "
                    f"{window}'s {first:.1f}/s (at least {min_ratio:.0%} expected)")
print(json.dumps({"trials": created, "ended": len(state), "seconds": round(total, 2),
                  "trials_per_s": round(len(done) / total, 1) if total > 0 else 0.0,
                  "window": window, "first_per_s": round(first, 1), "last_per_s": round(last, 1),
                  "last_over_first": round(ratio, 3), "problems": problems}))
sys.exit(1 if problems else 0)
