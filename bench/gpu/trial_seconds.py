#!/usr/bin/env python3
"""Each trial's seconds from its creation (hpo submits it) to its end, from an Optuna journal
written by hpo, without Optuna: `trial N STATE S s` a line, then the median.
Usage: trial_seconds.py JOURNAL"""
import datetime
import json
import statistics
import sys

STATES = {1: "COMPLETE", 2: "PRUNED", 3: "FAIL"}
start, end, state, order = {}, {}, {}, []
with open(sys.argv[1]) as f:
    for line in f:
        op = json.loads(line)
        if op.get("op_code") == 4:  # CREATE_TRIAL: trial numbers in creation order
            n = len(order)
            order.append(n)
            start[n] = datetime.datetime.fromisoformat(op["datetime_start"])
        elif op.get("op_code") == 6 and op.get("state") in STATES:  # SET_TRIAL_STATE_VALUES
            n = op["trial_id"]
            end[n] = datetime.datetime.fromisoformat(op["datetime_complete"])
            state[n] = STATES[op["state"]]
seconds = []
for n in order:
    if n in end:
        s = (end[n] - start[n]).total_seconds()
        seconds.append(s)
        print(f"trial {n} {state[n]} {s:.2f} s")
if seconds:
    print(f"median {statistics.median(seconds):.2f} s over {len(seconds)} trials")
