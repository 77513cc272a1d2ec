"""Replays a sequential sweep's journal through Optuna's own pruner and checks that every
decision hpo took (continue at each reported step, prune at the last step of a PRUNED trial)
is the decision Optuna takes, and that the completed_rung attrs of successive halving and
hyperband match. The pruner is rebuilt from the study user attr "pruner" (the settings hpo
resolved), in a study of the same name (hyperband's brackets hash it).

Steps are samples (the sweep's resource axis). A COMPLETE trial's last step is its final
evaluation: Optuna's pruner sees it (and records the rungs it completes), but its decision is
moot, since the trial has trained to the end; it is not compared.

usage: pruner_replay_check.py JOURNAL [KIND]   (KIND: the pruner type the sweep must have used)
Run with Debian's python3 (optuna 3.1).
"""
import json
import os
import sys
import warnings

import optuna
from optuna.trial import TrialState

# The pruner from its settings, as the benchmark builds Optuna's (one place for both).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from optuna_policy import make_pruner  # noqa: E402

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)


def rungs(attrs):
    return {k: v for k, v in attrs.items() if k.startswith("completed_rung_")}


def main():
    path = sys.argv[1]
    ours = optuna.load_study(study_name=None, storage=optuna.storages.JournalStorage(
        optuna.storages.JournalFileStorage(path)))
    spec = json.loads(json.dumps(ours.user_attrs["pruner"]))
    if len(sys.argv) > 2 and spec["type"] != sys.argv[2]:
        print(f"the sweep used pruner {spec['type']}, not {sys.argv[2]}")
        return 1
    if ours.user_attrs.get("resource") != "samples":
        print(f"the journal's resource axis is {ours.user_attrs.get('resource')!r}, not 'samples'")
        return 1
    replay = optuna.create_study(study_name=ours.study_name, direction=ours.direction,
                                 pruner=make_pruner(spec))
    decisions = prunes = 0
    mismatches = []
    for t in ours.get_trials(deepcopy=False):
        if t.state == TrialState.RUNNING:
            mismatches.append(f"trial {t.number} is still RUNNING: not a finished sequential sweep")
            continue
        r = replay.ask()
        steps = sorted(t.intermediate_values)
        for i, step in enumerate(steps):
            r.report(t.intermediate_values[step], step)
            optuna_prunes = r.should_prune()
            last = i == len(steps) - 1
            if t.state == TrialState.COMPLETE and last:
                continue  # the final evaluation: moot
            hpo_pruned = t.state == TrialState.PRUNED and last
            decisions += 1
            prunes += optuna_prunes
            if optuna_prunes != hpo_pruned:
                mismatches.append(
                    f"trial {t.number} at {step} samples: hpo "
                    f"{'pruned' if hpo_pruned else 'continued'}, "
                    f"Optuna {'prunes' if optuna_prunes else 'continues'}")
        frozen = replay._storage.get_trial(r._trial_id)
        if rungs(frozen.system_attrs) != rungs(t.system_attrs):
            mismatches.append(f"trial {t.number}: rung attrs hpo {rungs(t.system_attrs)} != "
                              f"Optuna {rungs(frozen.system_attrs)}")
        if t.state == TrialState.COMPLETE:
            replay.tell(r, t.value)
        elif t.state == TrialState.PRUNED:
            replay.tell(r, state=TrialState.PRUNED)
        else:
            replay.tell(r, state=TrialState.FAIL)
    n_pruned = sum(t.state == TrialState.PRUNED for t in ours.get_trials(deepcopy=False))
    print(f"{spec}: {len(ours.trials)} trials, {decisions} decisions compared, "
          f"{prunes} prunes by Optuna, {n_pruned} trials pruned by hpo, {len(mismatches)} "
          "mismatches")
    for m in mismatches[:20]:
        print("  MISMATCH:", m)
    if n_pruned == 0:
        print("  the sweep pruned nothing: the comparison would prove little")
        return 1
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
