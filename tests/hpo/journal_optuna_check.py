#!/usr/bin/python3
"""Checks that Optuna 3.1 reads a tunefleet journal as hpo does.

Usage: journal_optuna_check.py JOURNAL VIEW.json [--no-format-check]

JOURNAL is a study journal (Optuna's JournalStorage file format) written by hpo; VIEW.json is
hpo's own view of it (`journal_tool read JOURNAL`, or `write`). The journal is loaded with
optuna.load_study(storage=JournalStorage(JournalFileStorage(JOURNAL))) and compared trial by
trial with the view: number, state, params (values and types), distributions (as
json_to_distribution objects), value, intermediate values (NaN-aware), user and system attrs,
datetimes; then the study's direction, user attrs and best trial.

Unless --no-format-check, every complete line must also be byte-identical to what Optuna's
json.dumps writes for it (key order, separators, float repr, NaN, ASCII escapes), distributions
must be distribution_to_json's text, and datetimes isoformat(timespec="microseconds").

Run with Debian's /usr/bin/python3 (python3-optuna 3.1). Exits 0 and prints a one-line summary
when everything matches; exits 1 listing the mismatches otherwise.
"""

import argparse
import collections
import datetime
import json
import math
import sys
import warnings


def same(a, b):
    """Deep equality where NaN equals NaN, ints equal floats only when the types agree."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if type(a) is not type(b):
        # Optuna keeps JSON ints as ints; hpo's view does too. Tuples (choices) vs lists.
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            pass
        else:
            return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def iso(dt):
    return None if dt is None else dt.isoformat(timespec="microseconds")


def check_format(path, errors):
    """Each complete line is exactly Optuna's json.dumps of its content."""
    import optuna
    from optuna.distributions import distribution_to_json, json_to_distribution

    with open(path, "rb") as f:
        raw = f.read()
    lines = raw.split(b"\n")
    torn = lines.pop()  # after the last '\n': empty, or a torn tail
    for number, line in enumerate(lines, start=1):
        where = f"{path}:{number}"
        try:
            text = line.decode("ascii")
        except UnicodeDecodeError:
            errors.append(f"{where}: not ASCII (json.dumps escapes everything else)")
            continue
        try:
            log = json.loads(text)
        except json.JSONDecodeError as e:
            errors.append(f"{where}: not JSON: {e}")
            continue
        if json.dumps(log) != text:
            errors.append(f"{where}: not as json.dumps writes it:\n  got  {text}\n  want "
                          f"{json.dumps(log)}")
        keys = list(log)
        if keys[:2] != ["op_code", "worker_id"]:
            errors.append(f"{where}: keys start {keys[:2]}, want ['op_code', 'worker_id']")
        if "distribution" in log:
            d = log["distribution"]
            if distribution_to_json(json_to_distribution(d)) != d:
                errors.append(f"{where}: distribution {d} is not distribution_to_json's text")
            internal = log.get("param_value_internal")
            categorical = isinstance(json_to_distribution(d),
                                     optuna.distributions.CategoricalDistribution)
            if categorical and type(internal) is not int:
                errors.append(f"{where}: a categorical's internal value {internal!r} is not an "
                              "int (the choice index Optuna writes)")
            if not categorical and type(internal) is not float:
                errors.append(f"{where}: a float param's internal value {internal!r} is not a "
                              "float")
        for key in ("datetime_start", "datetime_complete"):
            if log.get(key) is not None:
                if iso(datetime.datetime.fromisoformat(log[key])) != log[key]:
                    errors.append(f"{where}: {key} {log[key]} is not "
                                  "isoformat(timespec='microseconds')")
    return len(lines), len(torn)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("journal")
    parser.add_argument("view")
    parser.add_argument("--no-format-check", action="store_true")
    args = parser.parse_args()

    warnings.simplefilter("ignore")  # JournalStorage is experimental in 3.1
    import optuna
    from optuna.distributions import json_to_distribution

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    with open(args.view) as f:
        view = json.load(f)
    errors = []

    lines, torn_bytes = 0, 0
    if not args.no_format_check:
        lines, torn_bytes = check_format(args.journal, errors)

    def storage():
        return optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(args.journal))

    study = optuna.load_study(study_name=view["study_name"], storage=storage())
    # With one study in the journal, no name is needed.
    unnamed = optuna.load_study(study_name=None, storage=storage())
    if unnamed.study_name != view["study_name"]:
        errors.append(f"load_study(None) found {unnamed.study_name!r}")

    if study.direction.name != view["direction"]:
        errors.append(f"direction: optuna {study.direction.name}, hpo {view['direction']}")
    if not same(study.user_attrs, view["user_attrs"]):
        errors.append(f"study user_attrs: optuna {study.user_attrs}, hpo {view['user_attrs']}")

    trials = study.get_trials(deepcopy=False)
    if len(trials) != len(view["trials"]):
        errors.append(f"{len(trials)} trials in optuna, {len(view['trials'])} in hpo")
    for got, want in zip(trials, view["trials"]):
        n = want["number"]

        def mismatch(field, optuna_value, hpo_value):
            errors.append(f"trial {n} {field}: optuna {optuna_value!r}, hpo {hpo_value!r}")

        if got.number != n:
            mismatch("number", got.number, n)
        if got.state.name != want["state"]:
            mismatch("state", got.state.name, want["state"])
        if not same(got.params, want["params"]):
            mismatch("params", got.params, want["params"])
        want_dists = {k: json_to_distribution(v) for k, v in want["distributions"].items()}
        if got.distributions != want_dists:
            mismatch("distributions", got.distributions, want_dists)
        if not same(got.value, want["value"]):
            mismatch("value", got.value, want["value"])
        want_iv = {int(k): v for k, v in want["intermediate_values"].items()}
        if not same(got.intermediate_values, want_iv):
            mismatch("intermediate_values", got.intermediate_values, want_iv)
        if not same(got.user_attrs, want["user_attrs"]):
            mismatch("user_attrs", got.user_attrs, want["user_attrs"])
        if not same(got.system_attrs, want["system_attrs"]):
            mismatch("system_attrs", got.system_attrs, want["system_attrs"])
        if iso(got.datetime_start) != want["datetime_start"]:
            mismatch("datetime_start", iso(got.datetime_start), want["datetime_start"])
        if iso(got.datetime_complete) != want["datetime_complete"]:
            mismatch("datetime_complete", iso(got.datetime_complete), want["datetime_complete"])

    complete = [t for t in view["trials"] if t["state"] == "COMPLETE"]
    best = None
    if complete:
        pick = max if view["direction"] == "MAXIMIZE" else min
        best = pick(complete, key=lambda t: t["value"])
        if study.best_trial.number != best["number"] or study.best_value != best["value"]:
            errors.append(f"best trial: optuna {study.best_trial.number} "
                          f"({study.best_value}), hpo {best['number']} ({best['value']})")

    if errors:
        print(f"FAIL: {args.journal}: {len(errors)} mismatches", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    states = collections.Counter(t.state.name for t in trials)
    summary = ", ".join(f"{c} {s}" for s, c in sorted(states.items()))
    best_text = f"best trial {best['number']} ({best['value']})" if best else "no best trial"
    extra = f", {lines} lines checked" if lines else ""
    if torn_bytes:
        extra += f", torn tail of {torn_bytes} bytes ignored"
    print(f"OK: {args.journal}: study '{study.study_name}' ({study.direction.name}), "
          f"{len(trials)} trials ({summary}), {best_text}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
