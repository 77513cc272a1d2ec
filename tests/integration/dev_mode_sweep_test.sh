#!/usr/bin/env bash
# The README's main job: `hpo sweep configs/synthetic.yaml` in single-node dev mode. It must
# finish within a minute, show progress and the best trial, leave no process behind, and write
# a journal that Optuna 3.1 reads exactly as hpo sees it; grid points follow the random phase
# and repeat no point.  Args: hpo binary, journal_optuna_check.py.
HPO=$1 CHECK=$2
source tests/integration/lib.sh

start=$(date +%s.%N)
out=$("$HPO" sweep configs/synthetic.yaml --journal "$WORK/run/journal.log" \
      --report_json "$WORK/view.json" 2>"$WORK/stderr.txt"); rc=$?
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
echo "$out" | tail -5
echo "elapsed ${elapsed}s"
[ "$rc" -eq 0 ] || { fail "hpo sweep exited $rc: $(tail -5 "$WORK/stderr.txt")"; finish; }
(( $(echo "$elapsed < 60" | bc) )) || fail "the dev-mode sweep took ${elapsed}s (> 60 s)"
echo "$out" | grep -qE '^best trial #[0-9]+: eval/spearman=' || fail "no best trial in the summary"
echo "$out" | grep -qE '^trial [0-9]+ (COMPLETE|PRUNED)' || fail "no progress lines"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"

J="$WORK/run/journal.log"
n=$(pyq "$J" 'len(T)')
[ "$n" -ge 12 ] && [ "$n" -le 16 ] || fail "expected about 16 trials, got $n"
[ "$(pyq "$J" "sum(t['state'] in ('COMPLETE','PRUNED') for t in T)")" -eq "$n" ] || fail "not every trial finished"
[ "$(pyq "$J" "sum(t['user_attrs']['phase']=='random' for t in T)")" -eq 8 ] || fail "want 8 random trials"
[ "$(pyq "$J" "sum(t['state']=='PRUNED' for t in T)")" -ge 1 ] || fail "median pruning pruned nothing"
# Grid trials come after every random trial, and no (lr, batch) point repeats.
pyq "$J" "all(t['user_attrs']['phase']=='grid' for t in T[8:])" | grep -q True || fail "grid before random"
pyq "$J" "len({(round(t['params']['lr'],15), t['params']['batch_size']) for t in T}) == len(T)" |
  grep -q True || fail "a point was run twice"
# Linear scaling: lr_effective = lr * batch / 32 (1 rank, grad_accum 1).
pyq "$J" "all(abs(t['user_attrs']['lr_effective'] - t['params']['lr']*t['params']['batch_size']/32) <= 1e-12*t['user_attrs']['lr_effective'] for t in T)" |
  grep -q True || fail "lr_effective is not lr * batch / 32"
# Optuna reads the journal exactly as hpo saw the sweep (its in-memory view at the end).
"$PY" "$CHECK" "$J" "$WORK/view.json" || fail "Optuna's view of the journal differs from hpo's"
finish
