"""Checks bench/search_efficiency on a recorded table (run with Debian's python3: optuna 3.1).

1. The benchmark as CI runs it (3 seeds): one well-formed JSON line per method, every
   tunefleet sampler with every pruner (at least random, grid, random_then_grid x none, median,
   successive_halving, hyperband) and Optuna's TPE and random with each pruner that prunes, one
   of them the sweep as configured, figures in range.
2. Its accounting, against an independent computation from the journal: the table's own grid
   replayed one trial at a time without pruning finds the best after the samples of the trials
   up to the first one within EPS, in trial order, and has at 35% of the compute the best of
   the trials finished by then.
3. A journal of the previous version (keyed by optimizer steps, the final value no
   intermediate one), written here from the table with Optuna, replays the same; without
   --epoch_samples it is refused with one line.

usage: search_efficiency_check.py BENCH TABLE SWEEP TABLE_SWEEP WORK_DIR
"""
import json
import os
import subprocess
import sys
import warnings

warnings.simplefilter("ignore")
import optuna  # noqa: E402
from optuna.trial import TrialState  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)
EPS = 0.005
FAILURES = []


def fail(message):
    print("FAIL:", message)
    FAILURES.append(message)


def bench(*args, expect_rc=0):
    proc = subprocess.run(list(args), capture_output=True, text=True)
    if proc.returncode != expect_rc:
        fail(f"{' '.join(args[1:])}: exit {proc.returncode}, want {expect_rc}: {proc.stderr[-500:]}")
        return [], proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def load(path):
    return optuna.load_study(study_name=None, storage=optuna.storages.JournalStorage(
        optuna.storages.JournalFileStorage(path)))


def expected_grid(study):
    """grid+none one at a time, in trial order: (fraction_to_within, best_at_35pct)."""
    done = [t for t in study.get_trials(deepcopy=False) if t.state == TrialState.COMPLETE]
    done.sort(key=lambda t: t.user_attrs["point"])  # the grid's order (a retry keeps its point)
    totals = [max(t.intermediate_values) for t in done]
    compute = sum(totals)
    best = max(t.value for t in done)
    spent, fraction, at35 = 0, None, None
    for t, total in zip(done, totals):
        spent += total
        if fraction is None and t.value >= best - EPS:
            fraction = spent / compute
        if spent <= 0.35 * compute:
            at35 = t.value if at35 is None else max(at35, t.value)
    return fraction, at35


def write_old_journal(study, path):
    """The table as the previous version journaled it: steps = samples // batch, no final."""
    if os.path.exists(path):
        os.remove(path)
    old = optuna.create_study(study_name=study.study_name, direction=study.direction,
                              storage=optuna.storages.JournalStorage(
                                  optuna.storages.JournalFileStorage(path)))
    for t in study.get_trials(deepcopy=False):
        if t.state != TrialState.COMPLETE:
            continue
        total = max(t.intermediate_values)
        batch = t.params["batch_size"]
        steps = {k // batch: v for k, v in t.intermediate_values.items() if k < total}
        old.add_trial(optuna.trial.create_trial(
            params=t.params, distributions=t.distributions, value=t.value,
            intermediate_values=steps, state=TrialState.COMPLETE))
    return total


def main():
    binary, table, sweep, table_sweep, work = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)

    # 1. The benchmark, 3 seeds.
    lines, _ = bench(binary, "--table", table, "--sweep", sweep, "--seeds", "3")
    labels = [l.get("method") for l in lines]
    # The samplers and pruners come from hpo's registries: every pair, in registry order; at
    # least the ones this table was recorded for.
    ours = [l.split(":", 1)[1].split("+") for l in labels if l and l.startswith("tunefleet:")]
    samplers = list(dict.fromkeys(s for s, _ in ours))
    pruners = list(dict.fromkeys(p for _, p in ours))
    for need, have in ((("random", "grid", "random_then_grid"), samplers),
                       (("none", "median", "successive_halving", "hyperband"), pruners)):
        if not set(need) <= set(have):
            fail(f"methods {labels} lack some of {need}")
    want = [f"tunefleet:{s}+{p}" for s in samplers for p in pruners]
    want += [f"optuna:{s}+{p}" for s in ("tpe", "random") for p in pruners if p != "none"]
    if labels != want:
        fail(f"methods {labels}, want {want}")
    for l in lines:
        keys = {"method", "seeds", "median_fraction_to_within", "p90_fraction_to_within",
                "median_best_at_35pct", "never_within", "configured", "mean_trials",
                "mean_pruned", "median_fraction_spent"}
        if set(l) != keys:
            fail(f"{l.get('method')}: keys {sorted(l)}")
            continue
        if l["seeds"] != 3 or not 0 <= l["never_within"] <= 3:
            fail(f"{l['method']}: seeds {l['seeds']}, never_within {l['never_within']}")
        med, p90 = l["median_fraction_to_within"], l["p90_fraction_to_within"]
        if not (0 < med <= p90 <= 1):
            fail(f"{l['method']}: fractions {med}, {p90}")
        if not 0 < l["median_fraction_spent"] <= 1.0 + 1e-9:
            fail(f"{l['method']}: spent {l['median_fraction_spent']} of the grid's compute")
        if l["method"].endswith("+none") and l["mean_pruned"] != 0:
            fail(f"{l['method']}: pruned {l['mean_pruned']} trials without a pruner")
    configured = [l["method"] for l in lines if l.get("configured")]
    if len(configured) != 1 or not configured[0].startswith("tunefleet:"):
        fail(f"configured methods {configured}, want one of tunefleet's")
    pruning = [l for l in lines if l["method"] == "tunefleet:random+median"]
    if pruning and pruning[0]["mean_pruned"] == 0:
        fail("the median pruner stopped nothing in the random search: the replay proves little")
    print(f"1. {len(lines)} methods; configured {configured}")

    # 2. The accounting, independently.
    study = load(table)
    fraction, at35 = expected_grid(study)
    grid, _ = bench(binary, "--table", table, "--sweep", table_sweep, "--seeds", "1",
                    "--methods", "tunefleet:grid+none", "max_concurrent_trials=1")
    if grid:
        got = grid[0]
        if abs(got["median_fraction_to_within"] - fraction) > 1e-12:
            fail(f"grid+none fraction {got['median_fraction_to_within']}, want {fraction}")
        if at35 is None and got["median_best_at_35pct"] is not None or \
                at35 is not None and abs(got["median_best_at_35pct"] - at35) > 1e-12:
            fail(f"grid+none best at 35% {got['median_best_at_35pct']}, want {at35}")
        print(f"2. grid+none: fraction {fraction:.6f}, best at 35% {at35} (as computed here)")

    # 3. A journal of the previous version.
    old = os.path.join(work, "old_table.log")
    epoch = write_old_journal(study, old)
    refused, err = bench(binary, "--table", old, "--sweep", table_sweep, "--seeds", "1",
                         expect_rc=2)
    if "give --epoch_samples" not in err or len(err.strip().splitlines()) != 1:
        fail(f"an old table without --epoch_samples: {err!r}")
    replayed, _ = bench(binary, "--table", old, "--sweep", table_sweep, "--seeds", "1",
                        "--methods", "tunefleet:grid+none", "--epoch_samples", str(epoch),
                        "max_concurrent_trials=1")
    if replayed and abs(replayed[0]["median_fraction_to_within"] - fraction) > 1e-12:
        fail(f"the old journal replays to {replayed[0]['median_fraction_to_within']}, want "
             f"{fraction}")
    print(f"3. the journal keyed by steps (epoch {epoch} samples) replays the same")
    print("search_efficiency_check:", "OK" if not FAILURES else f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
