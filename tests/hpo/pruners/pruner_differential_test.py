"""Differential test of tunefleet's pruners against Optuna 3.1 (Debian's python3-optuna).

Generates random scenarios with a fixed seed: a study name (Hyperband's brackets hang on it) and
direction, a MedianPruner, a PercentilePruner (percentile 0 to 100), a SuccessiveHalvingPruner
(auto min_resource and bootstrap_count included) or a HyperbandPruner (min_resource small or
large against the steps reported, so that there are many brackets, one or none; max_resource
fixed, an exact power of the reduction factor, or auto; bootstrap_count with a fixed
max_resource) with random parameters, interleaved trials reporting at random step gaps
(sometimes out of order), values with ties, NaNs and infinities,
trials finishing COMPLETE, FAIL or PRUNED. Each scenario is driven through Optuna adaptively
(ask, report, should_prune, tell; a trial Optuna prunes is told PRUNED at once and reports no
more), and the resulting event sequence is replayed through the C++ pruners by
pruner_replay_tool. Every decision and every trial's completed_rung_N attrs after it must match.

Run with /usr/bin/python3: pruner_differential_test.py TOOL [--scenarios N] [--seed S]
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import time
import warnings

import optuna
from optuna.trial import TrialState

RUNG_PREFIX = "completed_rung_"


def hexf(v):
    return float(v).hex()


def make_study_name(rng):
    """A study name: Hyperband's brackets are chosen by crc32(f"{study_name}_{trial_number}")."""
    stem = rng.choice(["sweep", "lr", "sbert-stsb", "bert_base", "\u00e9tude", "hpo/run"])
    if rng.random() < 0.7:
        return "%s-%d" % (stem, rng.randrange(10**6))
    return stem + "".join(rng.choice("0123456789abcdef") for _ in range(rng.randint(1, 12)))


def make_hyperband(rng, scale):
    """Returns (spec, Optuna pruner); max_resource 0 in the spec is "auto"."""
    auto = rng.random() < 0.4
    if rng.random() < 0.15:
        # Large against the steps reported (at most about 100 * scale): one bracket or none.
        min_resource = rng.choice([20, 50, 100]) * scale
    else:
        min_resource = rng.choice([1, 1, 2, 3, 5]) * rng.choice([1, scale])
    reduction_factor = rng.choice([2, 2, 3, 3, 4, 5])
    if auto:
        max_resource = 0
    elif rng.random() < 0.15:
        # math.log(243, 3) is 4.999999999999999: 5 brackets, not 6.
        reduction_factor = 3
        max_resource = min_resource * 243
    else:
        max_resource = rng.choice([
            rng.randint(1, 3 * min_resource),  # few brackets, or none (max_resource < min_resource)
            min_resource * reduction_factor ** rng.randint(0, 5),  # the log of an exact power
            rng.randint(1, 100) * scale,
        ])
    spec = {
        "min_resource": min_resource,
        "max_resource": max_resource,
        "reduction_factor": reduction_factor,
        # Optuna refuses bootstrap_count > 0 with an auto max_resource.
        "bootstrap_count": 0 if auto else rng.choice([0, 0, 0, 1, 2, 4]),
    }
    pruner = optuna.pruners.HyperbandPruner(
        min_resource, "auto" if auto else max_resource, reduction_factor, spec["bootstrap_count"])
    return spec, pruner


def make_pruner(rng, scale):
    """Returns (study event, Optuna pruner)."""
    kind = rng.choice(["median"] * 10 + ["successive_halving"] * 10 + ["hyperband"] * 10 +
                      ["percentile"] * 10 + ["none"])
    event = {"op": "study", "pruner": kind}
    if kind == "median":
        spec = {
            "n_startup_trials": rng.choice([0, 0, 1, 2, 3, 5, 8]),
            "n_warmup_steps": rng.choice([0, 0, 1, 2, 5]) * rng.choice([1, scale]),
            "interval_steps": rng.choice([1, 1, 2, 3, 5]) * rng.choice([1, scale]),
            "n_min_trials": rng.choice([1, 1, 2, 3, 5]),
        }
        event["median"] = spec
        pruner = optuna.pruners.MedianPruner(
            spec["n_startup_trials"], spec["n_warmup_steps"], spec["interval_steps"],
            n_min_trials=spec["n_min_trials"])
    elif kind == "percentile":
        spec = {
            "percentile": rng.choice([0.0, 10.0, 25.0, 50.0, 62.5, 90.0, 100.0,
                                      rng.uniform(0, 100)]),
            "n_startup_trials": rng.choice([0, 0, 1, 2, 3, 5, 8]),
            "n_warmup_steps": rng.choice([0, 0, 1, 2, 5]) * rng.choice([1, scale]),
            "interval_steps": rng.choice([1, 1, 2, 3, 5]) * rng.choice([1, scale]),
            "n_min_trials": rng.choice([1, 1, 2, 3, 5]),
        }
        event["percentile"] = spec
        pruner = optuna.pruners.PercentilePruner(
            spec["percentile"], spec["n_startup_trials"], spec["n_warmup_steps"],
            spec["interval_steps"], n_min_trials=spec["n_min_trials"])
    elif kind == "successive_halving":
        auto = rng.random() < 0.4
        spec = {
            "min_resource": 0 if auto else rng.choice([1, 1, 2, 3, 5]) * rng.choice([1, scale]),
            "reduction_factor": rng.choice([2, 2, 3, 4, 5]),
            "min_early_stopping_rate": rng.choice([0, 0, 0, 1, 2]),
            "bootstrap_count": rng.choice([0, 0, 0, 1, 2, 4]),
        }
        event["successive_halving"] = spec
        if auto and spec["bootstrap_count"] > 0:
            # Optuna refuses "auto" with bootstrap_count > 0; tunefleet's config does not. Build
            # Optuna's pruner with a fixed min_resource, then unset it: that is "auto".
            pruner = optuna.pruners.SuccessiveHalvingPruner(
                1, spec["reduction_factor"], spec["min_early_stopping_rate"],
                spec["bootstrap_count"])
            pruner._min_resource = None
        else:
            pruner = optuna.pruners.SuccessiveHalvingPruner(
                "auto" if auto else spec["min_resource"], spec["reduction_factor"],
                spec["min_early_stopping_rate"], spec["bootstrap_count"])
    elif kind == "hyperband":
        event["hyperband"], pruner = make_hyperband(rng, scale)
    else:
        pruner = optuna.pruners.NopPruner()
    return event, pruner


class Scenario:
    """Drives one random scenario through Optuna; records events and Optuna's decisions."""

    def __init__(self, rng):
        self.rng = rng
        self.scale = rng.choice([1, 1, 1, 1, 2, 10, 40])
        header, pruner = make_pruner(rng, self.scale)
        header["maximize"] = rng.random() < 0.5
        header["name"] = make_study_name(rng)
        self.kind = header["pruner"]
        self.events = [header]
        self.expected = []  # (index into events, prune, attrs as hex)
        self.study = optuna.create_study(
            study_name=header["name"], direction="maximize" if header["maximize"] else "minimize",
            pruner=pruner, sampler=optuna.samplers.RandomSampler(seed=0))
        self.n_trials = rng.randint(3, 40)
        self.concurrency = rng.choice([1, 1, 2, 3, 4, 6, 10])
        self.max_reports = rng.choice([3, 8, 15, 30])
        self.value_mode = rng.choice(["ties", "ties", "continuous", "trend"])
        self.p_nan = rng.choice([0, 0, 0.02, 0.1, 0.4])
        self.p_inf = rng.choice([0, 0, 0.01, 0.05])
        self.p_fail_early = rng.choice([0, 0.005, 0.02])
        self.p_out_of_order = rng.choice([0, 0, 0.05])
        # should_prune before any report: never prunes, but may start Hyperband's brackets.
        self.p_ask_unreported = rng.choice([0.05, 0.05, 0.5])

    def value(self, t, step):
        rng = self.rng
        r = rng.random()
        if r < self.p_nan:
            return math.nan
        if r < self.p_nan + self.p_inf:
            return rng.choice([math.inf, -math.inf])
        if self.value_mode == "ties":
            return rng.choice([0.0, 0.25, 0.5, 0.5, 0.75, 1.0]) + t["quality_tie"]
        if self.value_mode == "continuous":
            return t["quality"] + 0.3 * rng.gauss(0, 1)
        progress = 1 - math.exp(-step / (5.0 * self.scale))
        return round(t["quality"] * progress + 0.05 * rng.gauss(0, 1), 2)

    def ask_prune(self, t):
        prune = t["trial"].should_prune()
        attrs = self.study._storage.get_trial(t["trial"]._trial_id).system_attrs
        attrs = {k: hexf(v) for k, v in attrs.items() if k.startswith(RUNG_PREFIX)}
        self.events.append({"op": "prune", "trial": t["number"]})
        self.expected.append((len(self.events) - 1, prune, attrs))
        return prune

    def finish(self, t, state):
        if state == TrialState.COMPLETE:
            value = self.rng.choice([0.5, self.rng.random()])
            self.study.tell(t["trial"], values=[value])
            self.events.append({"op": "finish", "trial": t["number"], "state": "COMPLETE",
                                "value": hexf(value)})
        else:
            self.study.tell(t["trial"], state=state)
            self.events.append({"op": "finish", "trial": t["number"], "state": state.name})
        self.active.remove(t)

    def create(self):
        rng = self.rng
        trial = self.study.ask()
        t = {
            "trial": trial, "number": trial.number,
            "reports_left": 0 if rng.random() < 0.05 else rng.randint(1, self.max_reports),
            "next_step": rng.choice([0, 0, 0, 1, 2, 5]) * self.scale, "steps": set(),
            "quality": rng.random(), "quality_tie": rng.choice([0.0, 0.0, 0.25]),
        }
        self.events.append({"op": "create"})
        self.active.append(t)
        if rng.random() < self.p_ask_unreported:
            self.ask_prune(t)

    def report(self, t):
        rng = self.rng
        step = t["next_step"]
        if t["steps"] and rng.random() < self.p_out_of_order:
            lower = [s for s in range(0, max(t["steps"])) if s not in t["steps"]]
            if lower:
                step = rng.choice(lower)
        if step == t["next_step"]:
            gap = rng.choice([1, 1, 1, 1, 2, 3])
            t["next_step"] += gap * (1 if rng.random() < 0.1 else self.scale)
        t["steps"].add(step)
        t["reports_left"] -= 1
        value = self.value(t, step)
        t["trial"].report(value, step)
        self.events.append({"op": "report", "trial": t["number"], "step": step,
                            "value": hexf(value)})
        r = rng.random()
        asks = 0 if r < 0.07 else (2 if r < 0.1 else 1)
        for _ in range(asks):
            if self.ask_prune(t):
                self.finish(t, TrialState.PRUNED)
                return

    def run(self):
        rng = self.rng
        self.active = []
        created = 0
        while created < self.n_trials or self.active:
            if created < self.n_trials and len(self.active) < self.concurrency and (
                    not self.active or rng.random() < 0.3):
                self.create()
                created += 1
                continue
            t = rng.choice(self.active)
            if rng.random() < self.p_fail_early:
                self.finish(t, TrialState.FAIL)
            elif t["reports_left"] <= 0:
                self.finish(t, rng.choices(
                    [TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED], [85, 10, 5])[0])
            else:
                self.report(t)
        return self


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("--scenarios", type=int, default=600)
    parser.add_argument("--seed", type=int, default=20230131)
    args = parser.parse_args()

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore", RuntimeWarning)  # numpy's all-NaN slices
    warnings.simplefilter("ignore", UserWarning)
    assert optuna.__version__.startswith("3.1."), optuna.__version__

    start = time.time()
    rng = random.Random(args.seed)
    scenarios = [Scenario(rng).run() for _ in range(args.scenarios)]
    optuna_s = time.time() - start

    lines, expected, owner = [], {}, []
    for k, sc in enumerate(scenarios):
        base = len(lines)
        lines.extend(json.dumps(e) for e in sc.events)
        owner.extend([k] * len(sc.events))
        for i, prune, attrs in sc.expected:
            expected[base + i + 1] = (prune, attrs)
    start = time.time()
    proc = subprocess.run([args.tool], input="\n".join(lines) + "\n", capture_output=True,
                          text=True)
    tool_s = time.time() - start
    if proc.returncode != 0:
        print("replay tool failed (%d): %s" % (proc.returncode, proc.stderr))
        return 1

    got = [json.loads(l) for l in proc.stdout.splitlines()]
    mismatches = []
    if [g["line"] for g in got] != sorted(expected):
        print("replay tool answered %d prune events, want %d" % (len(got), len(expected)))
        return 1
    n_pruned = n_attrs = 0
    by_kind = {}  # kind -> [decisions, prunes]
    for g in got:
        want_prune, want_attrs = expected[g["line"]]
        got_attrs = {k: float.fromhex(v).hex() for k, v in g["system_attrs"].items()}
        kind = scenarios[owner[g["line"] - 1]].kind
        counts = by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += want_prune
        n_pruned += want_prune
        n_attrs += len(want_attrs)
        if g["prune"] != want_prune or got_attrs != want_attrs:
            mismatches.append((g["line"], want_prune, want_attrs, g["prune"], got_attrs))

    print("compared %d decisions (%d prune; %s) and %d completed_rung attrs over %d scenarios; "
          "optuna %.1fs, C++ replay %.2fs" % (
              len(got), n_pruned,
              ", ".join("%s %d/%d pruned" % (k, v[1], v[0]) for k, v in sorted(by_kind.items())),
              n_attrs, len(scenarios), optuna_s, tool_s))
    n_brackets = {}  # Optuna's bracket count at the end of each hyperband scenario
    for sc in scenarios:
        if sc.kind == "hyperband":
            n = sc.study.pruner._n_brackets
            n = "uninitialized" if n is None else "<=0" if n <= 0 else n
            n_brackets[n] = n_brackets.get(n, 0) + 1
    print("hyperband scenarios by n_brackets: %s" % sorted(n_brackets.items(), key=str))
    if not mismatches:
        return 0
    out_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", "/tmp")
    for line, want_prune, want_attrs, got_prune, got_attrs in mismatches[:10]:
        k = owner[line - 1]
        path = os.path.join(out_dir, "pruner_scenario_%d.jsonl" % k)
        with open(path, "w") as f:
            f.write("\n".join(json.dumps(e) for e in scenarios[k].events) + "\n")
        print("MISMATCH scenario %d (%s), line %d %s: optuna prune=%s attrs=%s, C++ prune=%s "
              "attrs=%s" % (k, path, line, lines[line - 1], want_prune, want_attrs, got_prune,
                            got_attrs))
    print("%d mismatches" % len(mismatches))
    return 1


if __name__ == "__main__":
    sys.exit(main())
