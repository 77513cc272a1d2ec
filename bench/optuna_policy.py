#!/usr/bin/python3
"""Optuna 3.1's samplers and pruners behind bench/optuna_policy.h, over stdin and stdout.

One JSON object a line in, one a line out, in order:
  {"op": "study", "name": NAME, "maximize": bool, "sampler": "tpe" | "random", "seed": N,
   "tpe": {TPESampler's settings, search.tpe's keys; gamma the fraction of default_gamma},
   "pruner": {"type": "median" | "successive_halving" | "hyperband" | "none", ...settings},
   "space": {param: Optuna distribution JSON (a string)}}      -> {"ok": true}
  {"op": "ask"}                                                 -> {"trial": N, "params": {...}}
  {"op": "report", "trial": N, "step": SAMPLES, "value": V, "final": bool}
                                                                -> {"prune": bool}
  {"op": "tell", "trial": N, "completed": bool}                 -> {"ok": true}
A final report is reported and shown to the pruner like any other (its rungs are recorded),
but the trial has trained to the end: it is told COMPLETE with that value, whatever the pruner
says, as tunefleet's sweep does. A stopped trial is told PRUNED.
Run with Debian's python3 (optuna 3.1).
"""
import json
import math
import sys
import warnings

warnings.simplefilter("ignore")
import optuna  # noqa: E402
from optuna.distributions import json_to_distribution  # noqa: E402
from optuna.trial import TrialState  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)


def make_pruner(spec):
    kind = spec["type"]
    if kind == "median":
        return optuna.pruners.MedianPruner(
            n_startup_trials=spec["n_startup_trials"], n_warmup_steps=spec["n_warmup_steps"],
            interval_steps=spec["interval_steps"], n_min_trials=spec["n_min_trials"])
    if kind == "percentile":
        return optuna.pruners.PercentilePruner(
            spec["percentile"], n_startup_trials=spec["n_startup_trials"],
            n_warmup_steps=spec["n_warmup_steps"], interval_steps=spec["interval_steps"],
            n_min_trials=spec["n_min_trials"])
    if kind == "successive_halving":
        return optuna.pruners.SuccessiveHalvingPruner(
            min_resource=spec["min_resource"], reduction_factor=spec["reduction_factor"],
            min_early_stopping_rate=spec["min_early_stopping_rate"],
            bootstrap_count=spec["bootstrap_count"])
    if kind == "hyperband":
        return optuna.pruners.HyperbandPruner(
            min_resource=spec["min_resource"], max_resource=spec["max_resource"],
            reduction_factor=spec["reduction_factor"], bootstrap_count=spec["bootstrap_count"])
    if kind == "none":
        return optuna.pruners.NopPruner()
    raise ValueError(f"unknown pruner {kind}")


def make_sampler(name, seed, tpe):
    if name == "tpe":
        tpe = dict(tpe)
        if "gamma" in tpe:  # default_gamma with its 0.1 replaced
            fraction = tpe.pop("gamma")
            tpe["gamma"] = lambda n: min(int(math.ceil(fraction * n)), 25)
        return optuna.samplers.TPESampler(seed=seed, **tpe)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise ValueError(f"unknown sampler {name}")


def main():
    study, space, trials = None, {}, {}
    for line in sys.stdin:
        m = json.loads(line)
        op = m["op"]
        if op == "study":
            study = optuna.create_study(
                study_name=m["name"], direction="maximize" if m["maximize"] else "minimize",
                sampler=make_sampler(m["sampler"], m["seed"], m.get("tpe", {})),
                pruner=make_pruner(m["pruner"]))
            space = {k: json_to_distribution(v) for k, v in m["space"].items()}
            trials = {}
            out = {"ok": True}
        elif op == "ask":
            t = study.ask(fixed_distributions=space)
            trials[t.number] = t
            out = {"trial": t.number, "params": t.params}
        elif op == "report":
            t = trials[m["trial"]]
            t.report(m["value"], m["step"])
            prune = t.should_prune()
            out = {"prune": bool(prune) and not m["final"]}
        elif op == "tell":
            t = trials.pop(m["trial"])
            if m["completed"]:
                last = max(t.storage.get_trial(t._trial_id).intermediate_values.items())
                study.tell(t, last[1])
            else:
                study.tell(t, state=TrialState.PRUNED)
            out = {"ok": True}
        else:
            raise ValueError(f"unknown op {op}")
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
