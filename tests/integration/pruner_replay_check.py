"""Replays a sequential sweep's journal through Optuna's own pruner and checks that every
decision hpo took (continue at each reported step, prune at the last step of a PRUNED trial)
is the decision Optuna takes, and that successive halving's completed_rung attrs match.

usage: pruner_replay_check.py JOURNAL median N_STARTUP N_WARMUP INTERVAL N_MIN
       pruner_replay_check.py JOURNAL successive_halving MIN_RESOURCE|auto REDUCTION MIN_RATE BOOTSTRAP
Run with Debian's python3 (optuna 3.1).
"""
import math
import sys
import warnings

import optuna
from optuna.trial import TrialState

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)


def main():
    path, kind = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    if kind == "median":
        pruner = optuna.pruners.MedianPruner(
            n_startup_trials=int(args[0]), n_warmup_steps=int(args[1]),
            interval_steps=int(args[2]), n_min_trials=int(args[3]))
    else:
        pruner = optuna.pruners.SuccessiveHalvingPruner(
            min_resource=args[0] if args[0] == "auto" else int(args[0]),
            reduction_factor=int(args[1]), min_early_stopping_rate=int(args[2]),
            bootstrap_count=int(args[3]))
    ours = optuna.load_study(study_name=None, storage=optuna.storages.JournalStorage(
        optuna.storages.JournalFileStorage(path)))
    replay = optuna.create_study(direction=ours.direction, pruner=pruner)
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
            hpo_pruned = t.state == TrialState.PRUNED and i == len(steps) - 1
            decisions += 1
            prunes += optuna_prunes
            if optuna_prunes != hpo_pruned:
                mismatches.append(
                    f"trial {t.number} step {step}: hpo {'pruned' if hpo_pruned else 'continued'}, "
                    f"Optuna {'prunes' if optuna_prunes else 'continues'}")
        frozen = replay._storage.get_trial(r._trial_id)
        rungs_optuna = {k: v for k, v in frozen.system_attrs.items() if k.startswith("completed_rung_")}
        rungs_hpo = {k: v for k, v in t.system_attrs.items() if k.startswith("completed_rung_")}
        if rungs_optuna != rungs_hpo:
            mismatches.append(f"trial {t.number}: rung attrs hpo {rungs_hpo} != Optuna {rungs_optuna}")
        if t.state == TrialState.COMPLETE:
            replay.tell(r, t.value)
        elif t.state == TrialState.PRUNED:
            replay.tell(r, state=TrialState.PRUNED)
        else:
            replay.tell(r, state=TrialState.FAIL)
    n_pruned = sum(t.state == TrialState.PRUNED for t in ours.get_trials(deepcopy=False))
    print(f"{kind}: {len(ours.trials)} trials, {decisions} decisions compared, "
          f"{prunes} prunes by Optuna, {n_pruned} trials pruned by hpo, {len(mismatches)} mismatches")
    for m in mismatches[:20]:
        print("  MISMATCH:", m)
    if n_pruned == 0:
        print("  the sweep pruned nothing: the comparison would prove little")
        return 1
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
