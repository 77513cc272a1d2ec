#!/usr/bin/env bash
# Optuna 3.1 (Debian's python3-optuna, under /usr/bin/python3) reads hpo's study journal as hpo
# does: a representative study (warm workers' user attr "worker" included), then the same with a
# torn half line appended (Optuna ignores it), then after a resume cut the torn tail and ended
# the running trial. A deliberately wrong view must be caught, so the check cannot pass
# vacuously.
# Args: path of journal_tool.
set -uo pipefail
TOOL=$1
PY=/usr/bin/python3
CHECK="$(dirname "$0")/journal_optuna_check.py"
DIR="${TEST_TMPDIR:-$(mktemp -d)}/journal_optuna"
rm -rf "$DIR" && mkdir -p "$DIR"
J="$DIR/runs/journal.log"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

if ! "$PY" -c 'import optuna, sys; sys.exit(optuna.__version__.split(".")[:2] != ["3", "1"])'; then
  echo "FAIL: $PY has no optuna 3.1"; exit 1
fi

# 1. The representative study.
"$TOOL" write "$J" >"$DIR/view.json" || fail "journal_tool write"
"$PY" "$CHECK" "$J" "$DIR/view.json" || fail "optuna disagrees with hpo on the written study"
"$TOOL" read "$J" >"$DIR/view_read.json" || fail "journal_tool read"
cmp -s "$DIR/view.json" "$DIR/view_read.json" || fail "read view differs from write view"

# 1b. The warm workers' user attr "worker", as Optuna reads it (so the comparison above holds it).
"$PY" - "$J" <<'EOF' || fail "optuna does not read the user attr \"worker\" as written"
import sys, warnings
warnings.simplefilter("ignore")
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
storage = optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(sys.argv[1]))
trials = optuna.load_study(study_name=None, storage=storage).get_trials(deepcopy=False)
got = {t.number: t.user_attrs.get("worker") for t in trials}
want = {t.number: None for t in trials}
want.update({0: "local/slot-0/w-4242#1", 9: "local/slot-0/w-4242#10"})
if got != want:
    sys.exit(f"worker attrs: optuna {got}, want {want}")
EOF

# 2. A torn half line at the end: both readers ignore it.
last=$(tail -n 1 "$J")
printf '%s' "${last:0:$(( ${#last} / 2 ))}" >>"$J"
torn=$(( ${#last} / 2 ))
"$PY" "$CHECK" "$J" "$DIR/view.json" || fail "optuna does not load the journal with a torn tail"
"$TOOL" read "$J" >"$DIR/view_torn.json" || fail "journal_tool read (torn tail)"
cmp -s "$DIR/view.json" "$DIR/view_torn.json" || fail "hpo reads the torn journal differently"

# 3. Resume: the writer cuts the torn tail, then appends (FAIL "interrupted" for RUNNING).
"$TOOL" resume "$J" >"$DIR/view_resumed.json" 2>"$DIR/resume.err" || fail "journal_tool resume"
grep -q "^dropped_bytes=$torn\$" "$DIR/resume.err" || fail "resume: $(cat "$DIR/resume.err"), want dropped_bytes=$torn"
grep -q '"state": "RUNNING"' "$DIR/view_resumed.json" && fail "resume left a RUNNING trial"
"$PY" "$CHECK" "$J" "$DIR/view_resumed.json" || fail "optuna disagrees with hpo after resume"

# 4. The checker catches a mismatch (a changed intermediate value).
"$PY" - "$DIR/view_resumed.json" "$DIR/view_wrong.json" <<'EOF'
import json, sys
view = json.load(open(sys.argv[1]))
view["trials"][0]["intermediate_values"]["100"] += 1e-9
json.dump(view, open(sys.argv[2], "w"))
EOF
if "$PY" "$CHECK" "$J" "$DIR/view_wrong.json" >/dev/null 2>"$DIR/wrong.err"; then
  fail "the checker accepted a wrong view"
elif ! grep -q "trial 0 intermediate_values" "$DIR/wrong.err"; then
  fail "the checker failed for another reason: $(cat "$DIR/wrong.err")"
fi

if [ "$failures" -ne 0 ]; then
  echo "journal_optuna_test: $failures failures"
  exit 1
fi
echo "journal_optuna_test: OK (written, torn tail, resumed; wrong view caught)"
