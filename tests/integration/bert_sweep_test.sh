#!/usr/bin/env bash
# The main job, shrunk to fit CI: `hpo sweep configs/lr.yaml` (Sentence-BERT on STS-B with
# bert-tiny-random, trained for real by `trainer train` under the agent) with 3 random trials and
# a grid of 2 at batch 64 and 128. Every trial ends COMPLETE or PRUNED; a complete trial's value
# in the journal is the last evaluation of its metrics.jsonl; `trainer eval` on the best trial's
# saved model (save: best) reproduces that trial's best eval/spearman; the command `hpo best`
# prints to re-run the best trial alone (its OUTPUT_DIR/.tunefleet/config.yaml) trains it again
# to the same losses, evaluations and weights (1e-6), from another folder; Optuna reads the
# journal as hpo sees it; no process is left behind.
# Args: hpo binary, trainer binary, journal_optuna_check.py, compare_runs.py.
HPO=$1 TRAINER=$2 CHECK=$3 COMPARE=$4
source tests/integration/lib.sh

out=$("$HPO" sweep configs/lr.yaml search.random.trials=3 search.grid.top_k=1 \
      search.grid.lr_points=2 search.grid.batch_neighbors=0 'parameters.batch_size.values=[64,128]' \
      max_concurrent_trials=2 --journal "$WORK/run/journal.log" --report_json "$WORK/view.json" \
      2>"$WORK/stderr.txt"); rc=$?
echo "$out" | tail -8
[ "$rc" -eq 0 ] || { fail "hpo sweep exited $rc: $(tail -5 "$WORK/stderr.txt")"; finish; }
echo "$out" | grep -qE '^best trial #[0-9]+: eval/spearman=' || fail "no best trial in the summary"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"

J="$WORK/run/journal.log"
n=$(pyq "$J" 'len(T)')
[ "$n" -ge 4 ] && [ "$n" -le 5 ] || fail "expected 4 or 5 trials, got $n"
[ "$(pyq "$J" "sum(t['state'] in ('COMPLETE','PRUNED') for t in T)")" -eq "$n" ] ||
  fail "not every trial finished: $(pyq "$J" "[t['state'] for t in T]")"

# Dev mode prewarmed a worker per concurrent trial while the trainer checked the config, and
# each ran trials of its slot (from its first: the journal's worker attr names its pid).
A="$WORK/run/logs/agent.log"
for s in 0 1; do
  pid=$(sed -n "s/.*prewarmed a warm worker for slot $s (pid \([0-9]*\),.*/\1/p" "$A")
  [ -n "$pid" ] || { fail "no worker prewarmed for slot $s: $(grep -m3 'warm worker' "$A")"; continue; }
  grep -q "the prewarmed worker of slot $s (pid $pid) takes its first trial" "$A" ||
    fail "slot $s's prewarmed worker (pid $pid) took no trial"
  [ "$(pyq "$J" "sum(t['user_attrs'].get('worker','').startswith('local/slot-$s/w-$pid#') for t in T)")" -ge 1 ] ||
    fail "no trial ran in slot $s's prewarmed worker $pid: $(pyq "$J" "[t['user_attrs'].get('worker') for t in T]")"
done

# Each complete trial: the journal's value is the last eval/spearman of its metrics.jsonl, and
# every evaluation was reported as an intermediate value at its step.
for t in $(pyq "$J" "' '.join(str(t['number']) for t in T if t['state']=='COMPLETE')"); do
  m="$WORK/run/trial-$t/metrics.jsonl"
  [ -s "$m" ] || { fail "trial $t wrote no $m"; continue; }
  "$PY" - "$m" "$(pyq "$J" "[x for x in T if x['number']==$t][0]['value']")" <<'PY' || fail "trial $t: journal and metrics.jsonl disagree"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
evals = [l for l in lines if "eval/spearman" in l]
assert evals, "no evaluation"
assert abs(evals[-1]["eval/spearman"] - float(sys.argv[2])) < 1e-6, (evals[-1], sys.argv[2])
PY
done

# The best trial's saved model, evaluated on its own, gives its best evaluation again.
best=$(pyq "$J" "max((t for t in T if t['state']=='COMPLETE'), key=lambda t: t['value'])['number']")
model="$WORK/run/trial-$best/model"
got=$("$TRAINER" eval --model "$model" --task sts --data data/stsbenchmark/sts-dev.csv 2>"$WORK/eval.err") ||
  fail "trainer eval failed: $(cat "$WORK/eval.err")"
"$PY" - "$WORK/run/trial-$best/metrics.jsonl" "$got" <<'PY' || fail "trainer eval of the best model: $got"
import json, sys
best = max(json.loads(l)["eval/spearman"] for l in open(sys.argv[1]) if "eval/spearman" in l)
got = json.loads(sys.argv[2])
assert got["examples"] == 1500, got
assert abs(got["eval/spearman"] - best) < 1e-4, (got, best)
PY

# The best trial re-run alone with the command `hpo best` prints, from another folder.
"$HPO" best --journal "$J" > "$WORK/best.txt" 2>&1 || fail "hpo best: $(cat "$WORK/best.txt")"
cat "$WORK/best.txt"
rerun=$(sed -n 's/^re-run: //p' "$WORK/best.txt")
read -r -a cmd <<< "$rerun"
[ "${cmd[1]:-}" = train ] && [ "${cmd[2]:-}" = --config ] &&
  [ "${cmd[3]:-}" = "$WORK/run/trial-$best/.tunefleet/config.yaml" ] &&
  [ "${cmd[4]:-}" = "output.dir=$WORK/run/trial-$best-rerun" ] || fail "hpo best's re-run line: '$rerun'"
lr_yaml=$(sed -n 's/^  lr: //p' "$WORK/run/trial-$best/.tunefleet/config.yaml")
[ "$(pyq "$J" "[t for t in T if t['number']==$best][0]['user_attrs']['lr_effective'] == float('$lr_yaml')")" = True ] ||
  fail "the resolved config's train.lr $lr_yaml is not the trial's lr_effective"
(cd / && "${cmd[@]}" > "$WORK/rerun.out" 2>&1) || fail "the re-run failed: $(tail -3 "$WORK/rerun.out")"
"$PY" "$COMPARE" "$WORK/run/trial-$best" "$WORK/run/trial-$best-rerun" 1e-6 ||
  fail "the re-run of trial $best differs from the trial"

"$PY" "$CHECK" "$J" "$WORK/view.json" || fail "Optuna's view of the journal differs from hpo's"
finish
