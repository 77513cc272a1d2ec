#!/usr/bin/env bash
# The four binaries as a user meets them: --help, one-line errors with exit 2 for bad input,
# and `hpo sweep --dry_run` printing the plan of the shipped sweep.
# Args: paths of head, agent, hpo, trainer.
set -uo pipefail
HEAD=$1 AGENT=$2 HPO=$3 TRAINER=$4
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect RC PATTERN CMD...: runs CMD, checks its exit code and that stdout+stderr match PATTERN.
expect() {
  local want_rc=$1 pattern=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  [ "$rc" -eq "$want_rc" ] || fail "$* exited $rc, want $want_rc: $out"
  echo "$out" | grep -qE -- "$pattern" || fail "$* output lacks /$pattern/: $out"
}
# one_line_error CMD...: exit 2 and exactly one line on stderr, nothing on stdout.
one_line_error() {
  local err out rc
  out=$("$@" 2>/tmp/cli_err.$$); rc=$?; err=$(cat /tmp/cli_err.$$); rm -f /tmp/cli_err.$$
  [ "$rc" -eq 2 ] || fail "$* exited $rc, want 2"
  [ -z "$out" ] || fail "$* wrote to stdout: $out"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "$* stderr is not one line: $err"
  echo "$err" | grep -q "error: " || fail "$* stderr lacks 'error: ': $err"
}

for bin in "$HEAD" "$AGENT"; do
  expect 0 '^Usage: ' "$bin" --help
  one_line_error "$bin" --no_such_flag
done
expect 0 '^Usage: hpo COMMAND' "$HPO" --help
expect 0 '^Usage: trainer COMMAND' "$TRAINER" --help
for sub in sweep status best; do expect 0 "^Usage: hpo $sub" "$HPO" "$sub" --help; done
for sub in train encode eval tokenize convert; do expect 0 "^Usage: trainer $sub" "$TRAINER" "$sub" --help; done
expect 2 "unknown command 'swep'" "$HPO" swep x.yaml
one_line_error "$AGENT"                                   # --head missing
one_line_error "$HEAD" --nodes /nonexistent/hosts.txt
one_line_error "$HEAD" --start_agents=pdsh
one_line_error "$HPO" sweep --dry_run /nonexistent/sweep.yaml
one_line_error "$HPO" sweep --dry_run configs/lr.yaml search.random.trials=many
one_line_error "$TRAINER" train --config configs/sbert_stsb.yaml train.precision=fp8
one_line_error "$TRAINER" tokenize
one_line_error "$TRAINER" convert --model /nonexistent/model --output /tmp/unused-convert-out

# A bad hosts file names file and line.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'a slots=2\nb\na\n' > "$tmp/hosts.txt"
expect 2 "hosts.txt:3: duplicate host 'a' \(first on line 1\)" "$HEAD" --nodes "$tmp/hosts.txt"

# The dry run prints the plan: space, scaling, pruner and the 8 random points.
out=$("$HPO" sweep --dry_run configs/lr.yaml 2>&1) || fail "dry run failed: $out"
for want in 'lr +log_uniform \[1e-05, 0.01\]' 'batch_size +categorical \{16, 32, 64, 128\}' \
            'lr_effective = lr \* batch_size \* 1 rank\(s\) \* 1 grad_accum / 32' \
            'resource +samples seen .*; 8 evaluations an epoch; 5749 samples an epoch' \
            'median \(Optuna MedianPruner: n_startup_trials=3, n_warmup_steps=2000,' \
            'planned +at most 32 trials'; do
  echo "$out" | grep -qE -- "$want" || fail "dry run lacks /$want/"
done
rows=$(echo "$out" | sed -n '/random points/,$p' | grep -cE '^ +[0-9]+ +[0-9.e+-]+ +[0-9]+ +[0-9.e+-]+$')
[ "$rows" -eq 8 ] || fail "dry run shows $rows random points, want 8"
# lr_effective = lr * batch / 32 on every row.
echo "$out" | sed -n '/random points/,$p' | awk 'NF==4 && $1 ~ /^[0-9]+$/ {
  want = $2 * $3 / 32; if (want - $4 > 1e-3 * want || $4 - want > 1e-3 * want) { print "row " $1; bad = 1 } }
  END { exit bad }' || fail "lr_effective is not lr * batch / 32"
# Overrides reach the plan.
"$HPO" sweep --dry_run configs/lr.yaml search.random.trials=3 lr_scaling.rule=none 2>&1 |
  grep -q 'lr_effective = lr$' || fail "override lr_scaling.rule=none not applied"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all CLI checks passed"
