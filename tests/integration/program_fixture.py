#!/usr/bin/env python3
"""A program trial for tests/integration/program_sweep_test.sh: no training, only what a trial
does with tunefleet's environment. Rank 0 reports `score` = -|log10(lr) + 2| + step / 1000 each
step (best near lr 1e-2); every process records its environment and pid in the trial's folder, and the ranks wait for
each other's record before the first step.

  --steps N --step-seconds S   report N times, S apart
  --ignore-sigterm             a SIGTERM is noted (its time in sigterm-RANK), then the rank hangs
  --bad-line                   rank 0 first writes a line that is not JSON to TUNEFLEET_METRICS
  --fail                       print 30 numbered lines and a traceback to stderr, exit 1
  --no-report                  exit 0 without a report
"""
import argparse
import json
import math
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import tunefleet  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--trial", type=int, required=True)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--step-seconds", type=float, default=0.05)
    p.add_argument("--ignore-sigterm", action="store_true")
    p.add_argument("--bad-line", action="store_true")
    p.add_argument("--fail", action="store_true")
    p.add_argument("--no-report", action="store_true")
    args = p.parse_args()
    trial_dir = os.environ["TUNEFLEET_TRIAL_DIR"]
    rank = os.environ.get("RANK", os.environ.get("GROUP_RANK", "0"))
    stopping = []
    if args.ignore_sigterm:
        def noted(signum, frame):
            with open(os.path.join(trial_dir, "sigterm-%s" % rank), "w") as f:
                f.write("%.6f\n" % time.time())
            stopping.append(signum)
        signal.signal(signal.SIGTERM, noted)
    env_file = os.path.join(trial_dir, "env-%s.json" % rank)
    with open(env_file + ".tmp", "w") as f:
        json.dump(dict(os.environ, PID=str(os.getpid()), CWD=os.getcwd(), ARGV=json.dumps(sys.argv)), f)
    os.rename(env_file + ".tmp", env_file)
    # The ranks meet before the first step, as DDP's init_process_group would (the trial folder
    # is shared in the tests): no report, hence no pruning, before every rank is up.
    world = int(os.environ.get("WORLD_SIZE", "1"))
    deadline = time.time() + 60
    while time.time() < deadline and not all(
            os.path.exists(os.path.join(trial_dir, "env-%d.json" % r)) for r in range(world)):
        time.sleep(0.05)
    if args.fail:
        for i in range(30):
            print("fixture stderr line %d" % i, file=sys.stderr)
        raise RuntimeError("the fixture fails as asked (trial %d)" % args.trial)
    if args.no_report:
        return
    lead = rank == "0" and tunefleet.in_sweep()
    if lead and args.bad_line:
        with open(os.environ["TUNEFLEET_METRICS"], "a") as f:
            f.write("this is not JSON\n")
    for step in range(1, args.steps + 1):
        time.sleep(args.step_seconds)
        while stopping:  # a rank stuck after SIGTERM (in a collective, say): only SIGKILL ends it
            time.sleep(1)
        score = -abs(math.log10(args.lr) + 2) + step / 1000.0
        tunefleet.report(step=step, samples=step * args.batch, score=score, note="text is ignored")
    # The ranks end together, as DDP's would.
    time.sleep(args.step_seconds)


if __name__ == "__main__":
    main()
