#!/usr/bin/env bash
# The samples axis end to end (issue 16, acceptance 1 and 4), with real trainers:
# 1. A sweep of batch sizes 16 and 128 on a 640-pair subset of STS-B (bert-tiny, one epoch)
#    journals at least 4 intermediate values for each trial, keyed by samples seen, so that the
#    last key of each trial is 640; Optuna reads them so; metrics.jsonl has "samples".
# 2. A sweep whose best point lies on a bound of its range says so in one line and records it
#    as the study user attr best_at_bound (the synthetic trainer, optimum at lr_effective 3e-4,
#    searched below it).
# Args: hpo, trainer binaries.
HPO=$1
source tests/integration/lib.sh

head -640 data/stsbenchmark/sts-train.csv > "$WORK/sts640.csv"
head -200 data/stsbenchmark/sts-dev.csv > "$WORK/dev200.csv"
cat > "$WORK/sweep.yaml" <<YAML
name: samples-axis
metric: {name: eval/spearman, goal: maximize}
trainer:
  config: configs/sbert_stsb.yaml
  overrides: {task.train: $WORK/sts640.csv, task.eval: $WORK/dev200.csv, train.epochs: 1,
              output.checkpoint: false, output.save: none}
parameters:
  lr: {values: [1.0e-3]}
  batch_size: {values: [16, 128]}
search: {method: grid}
early_terminate: {type: none}
max_concurrent_trials: 2
journal: $WORK/run/journal.log
YAML
"$HPO" sweep "$WORK/sweep.yaml" > "$WORK/hpo.out" 2>&1 || fail "sweep failed: $(tail -3 "$WORK/hpo.out")"
"$PY" - "$WORK/run/journal.log" <<'EOF_PY' || fail "the journal's samples axis"
import sys, warnings
warnings.simplefilter("ignore")
import optuna
optuna.logging.set_verbosity(optuna.logging.ERROR)
s = optuna.load_study(study_name=None, storage=optuna.storages.JournalStorage(
    optuna.storages.JournalFileStorage(sys.argv[1])))
bad = 0
assert s.user_attrs["resource"] == "samples", s.user_attrs
assert s.user_attrs["samples_per_epoch"] == 640, s.user_attrs
for t in s.trials:
    keys = sorted(t.intermediate_values)
    print(f"trial {t.number} batch {t.params['batch_size']} {t.state.name}: keys {keys}")
    if t.state.name != "COMPLETE" or len(keys) < 4 or keys[-1] != 640:
        print(f"  want COMPLETE, >= 4 keys, the last 640"); bad += 1
    elif t.intermediate_values[640] != t.value:
        print(f"  the value at 640 samples is not the final value {t.value}"); bad += 1
if sorted(t.params["batch_size"] for t in s.trials) != [16, 128]:
    print("want one trial of batch 16 and one of 128"); bad += 1
sys.exit(1 if bad else 0)
EOF_PY
grep -q '"samples": 640' "$WORK/run/trial-0/metrics.jsonl" ||
  fail "metrics.jsonl has no \"samples\": 640 line: $(tail -1 "$WORK/run/trial-0/metrics.jsonl")"

# 2. The best point on a bound.
"$HPO" sweep configs/synthetic.yaml --journal "$WORK/bound/journal.log" name=bound \
  trainer.synthetic.seconds_per_step=0 'parameters.lr={distribution: log_uniform, min: 1.0e-6, max: 1.0e-4}' \
  'parameters.batch_size.values=[32]' > "$WORK/bound.out" 2>&1 || fail "bound sweep failed: $(tail -3 "$WORK/bound.out")"
grep -qx "best lr at the upper bound 0.0001: widen parameters.lr.max" "$WORK/bound.out" ||
  fail "no bound warning in the summary: $(tail -4 "$WORK/bound.out")"
[ "$(pyq "$WORK/bound/journal.log" "s['user_attrs']['best_at_bound']")" = "{'lr': 'upper'}" ] ||
  fail "best_at_bound: $(pyq "$WORK/bound/journal.log" "s['user_attrs'].get('best_at_bound')")"
# Inside the range: the attr is empty and no line is printed.
"$HPO" sweep configs/synthetic.yaml --journal "$WORK/inside/journal.log" name=inside \
  trainer.synthetic.seconds_per_step=0 'parameters.batch_size.values=[32]' > "$WORK/inside.out" 2>&1 ||
  fail "inside sweep failed"
grep -q "bound" "$WORK/inside.out" && fail "a bound warning inside the range: $(grep bound "$WORK/inside.out")"
[ "$(pyq "$WORK/inside/journal.log" "s['user_attrs']['best_at_bound']")" = "{}" ] || fail "best_at_bound inside"
finish
