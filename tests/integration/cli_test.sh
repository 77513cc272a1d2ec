#!/usr/bin/env bash
# The four binaries as a user meets them: --help, one-line errors with exit 2 for bad input,
# and `hpo sweep --dry_run` printing the plan of the shipped sweep.
# Args: paths of head, agent, hpo, trainer.
set -uo pipefail
HEAD=$1 AGENT=$2 HPO=$3 TRAINER=$4
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

source tests/integration/expect_lib.sh

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
# Endpoints and names checked before anything starts (issue 17).
export XDG_RUNTIME_DIR=$(mktemp -d /tmp/tf-cli-XXXXXX)
expect 2 "port 99999 is out of range" "$HEAD" --bind tcp://127.0.0.1:99999 --insecure
one_line_error "$HEAD" --bind tcp://127.0.0.1:99999 --insecure
one_line_error "$HEAD" --bind tcp://127.0.0.1:0           # an unkeyed TCP bind needs --insecure
one_line_error "$AGENT" --head tcp://127.0.0.1:99999
expect 2 "--name '../../x y': 1-64 letters" "$AGENT" --head tcp://127.0.0.1:5555 --name '../../x y'
one_line_error "$AGENT" --head tcp://127.0.0.1:5555 --allow_env LD_PRELOAD
expect 2 "--allow_env: TUNEFLEET_BIN_DIR says which program" "$AGENT" --head tcp://127.0.0.1:5555 --allow_env MY_FLAG,TUNEFLEET_BIN_DIR
expect 2 "--allow_env: NCCL_NET_PLUGIN loads code" "$AGENT" --head tcp://127.0.0.1:5555 --allow_env NCCL_NET_PLUGIN
expect 2 "[.]{3} [(]5000001 bytes[)]' is not a host name" "$HEAD" --nodes <(head -c 5000001 /dev/zero | tr '\0' h)
# tcp://localhost:P binds the loopback address (ZeroMQ's bind takes no host names).
"$HEAD" --bind tcp://localhost:0 --insecure --start_agents none --endpoint_file "$XDG_RUNTIME_DIR/ep" \
  > "$XDG_RUNTIME_DIR/head.log" 2>&1 &
hp=$!
for _ in $(seq 50); do [ -s "$XDG_RUNTIME_DIR/ep" ] && break; sleep 0.1; done
grep -q '^tcp://127.0.0.1:[0-9]*$' "$XDG_RUNTIME_DIR/ep" 2>/dev/null ||
  fail "tcp://localhost:0 bound $(cat "$XDG_RUNTIME_DIR/ep" 2>/dev/null): $(cat "$XDG_RUNTIME_DIR/head.log")"
kill -TERM "$hp"; wait "$hp"
# A head's default socket is removed on a clean exit, and a killed head's is taken over.
"$HEAD" --start_agents none --endpoint_file "$XDG_RUNTIME_DIR/ep2" > "$XDG_RUNTIME_DIR/head2.log" 2>&1 &
hp=$!
for _ in $(seq 50); do [ -s "$XDG_RUNTIME_DIR/ep2" ] && break; sleep 0.1; done
sock=$(sed 's|^ipc://||' "$XDG_RUNTIME_DIR/ep2")
[ -S "$sock" ] || fail "no head socket at $sock"
kill -9 "$hp"; wait "$hp" 2>/dev/null
"$HEAD" --start_agents none --endpoint_file "$XDG_RUNTIME_DIR/ep3" > "$XDG_RUNTIME_DIR/head3.log" 2>&1 &
hp=$!
for _ in $(seq 50); do [ -s "$XDG_RUNTIME_DIR/ep3" ] && break; sleep 0.1; done
[ "$(cat "$XDG_RUNTIME_DIR/ep3" 2>/dev/null)" = "ipc://$sock" ] ||
  fail "a new head did not take over a killed one's socket: $(cat "$XDG_RUNTIME_DIR/head3.log")"
kill -TERM "$hp"; wait "$hp"
[ -e "$sock" ] && fail "the head left its socket $sock behind"
rm -rf "$XDG_RUNTIME_DIR"; unset XDG_RUNTIME_DIR
one_line_error "$HEAD" --nodes /nonexistent/hosts.txt
one_line_error "$HEAD" --start_agents=kubernetes
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
# Overrides reach the plan. (Output is captured before grep -q reads it: hpo writes a line at a
# time, and grep -q leaving early would end it with SIGPIPE under pipefail.)
out=$("$HPO" sweep --dry_run configs/lr.yaml search.random.trials=3 lr_scaling.rule=none 2>&1)
echo "$out" | grep -q 'lr_effective = lr$' || fail "override lr_scaling.rule=none not applied"

# The spellings users bring (issue 22): dashed flags; a type set on the command line drops the
# file's keys of the old type, with a note; Hydra's +key, ~key; --multirun's grid.
out=$("$HPO" sweep --dry-run configs/lr.yaml early_terminate.type=none 2>&1) ||
  fail "--dry-run with early_terminate.type=none failed: $out"
echo "$out" | grep -qx 'note     early_terminate.type=none (override): dropped n_startup_trials, n_warmup_steps, interval_steps from configs/lr.yaml' ||
  fail "no note of the dropped keys: $out"
echo "$out" | grep -qE '^  pruner +none' || fail "early_terminate.type=none not applied: $out"
expect 2 'unknown flag --dry-runn ' "$HPO" sweep --dry-runn configs/lr.yaml
one_line_error "$HPO" sweep --dry_run configs/lr.yaml early_terminate.type=none early_terminate.n_startup_trials=1
one_line_error "$HPO" sweep --dry_run configs/lr.yaml search.random.trials=4,8
expect 2 'got .4,8. \(to sweep over comma-separated values, add --multirun\)$' \
  "$HPO" sweep --dry_run configs/lr.yaml search.random.trials=4,8
expect 2 "override '\+train.lr=1e-4': train.lr is already set \(line [0-9]+\); use train.lr=1e-4" \
  "$TRAINER" train --config configs/sbert_stsb.yaml --dry-run +train.lr=1e-4
one_line_error "$TRAINER" train --config configs/sbert_stsb.yaml --dry-run '~train.no_such_key'
out=$("$HPO" sweep --dry_run configs/lr.yaml --multirun lr=1e-5,3e-5,1e-4 batch_size=16,32 2>&1) ||
  fail "--multirun dry run failed: $out"
for want in '^    lr +categorical \{1e-05, 3e-05, 0.0001\}' '^    batch_size +categorical \{16, 32\}' \
            '^  search +grid$' '^    grid +3 lr points x 2 batch sizes$' '^    planned +at most 6 trials$'; do
  echo "$out" | grep -qE -- "$want" || fail "--multirun dry run lacks /$want/: $out"
done
one_line_error "$HPO" sweep --dry_run configs/lr.yaml --multirun lr=1e-5,3e-5  # batch_size has 4 values

# hpo sweep's exit codes are in its --help.
help=$("$HPO" sweep --help)
echo "$help" | grep -qE '^  3 +the sweep ran but failed: no trial completed, or more than --max_failed_share' ||
  fail "hpo sweep --help does not document exit code 3"
echo "$help" | grep -qE -- '--max_failed_share=X' || fail "no --max_failed_share in hpo sweep --help"

# Bad flags are refused at once, before a head, an agent or a journal exists: one line, exit 2.
for head in garbage tcp://localhost tcp://localhost:0 tcp://localhost:99999 tcp://:5555 ipc://; do
  one_line_error "$HPO" sweep configs/synthetic.yaml --head "$head" --journal "$tmp/never/j.log"
done
expect 2 "--head 'garbage': .*expected tcp://HOST:PORT or ipc://PATH" \
  "$HPO" sweep configs/synthetic.yaml --head garbage --journal "$tmp/never/j.log"
expect 2 "port is not in 1-65535" "$HPO" sweep configs/synthetic.yaml --head tcp://h:70000
one_line_error "$HPO" sweep configs/synthetic.yaml --keys "$tmp" --journal "$tmp/never/j.log"
expect 2 '--keys needs --head' "$HPO" sweep configs/synthetic.yaml --keys "$tmp" --journal "$tmp/never/j.log"
one_line_error "$HPO" sweep configs/synthetic.yaml --max_failed_share 1.5 --journal "$tmp/never/j.log"
[ ! -e "$tmp/never" ] || fail "a refused sweep created its journal's folder"

# --journal: a folder is not a journal file; of an absolute path only the journal's own folder
# is created, when its parent exists.
mkdir "$tmp/journal_dir"
one_line_error "$HPO" sweep configs/synthetic.yaml --journal "$tmp/journal_dir"
expect 2 "journal $tmp/journal_dir is a folder, not a journal file" \
  "$HPO" sweep configs/synthetic.yaml --journal "$tmp/journal_dir"
one_line_error "$HPO" sweep configs/synthetic.yaml --journal "$tmp/missing/dir/j.log"
expect 2 "no such folder: $tmp/missing " "$HPO" sweep configs/synthetic.yaml --journal "$tmp/missing/dir/j.log"
[ ! -e "$tmp/missing" ] || fail "hpo created folders above the journal's own"

# A sweep file that is a folder says so.
one_line_error "$HPO" sweep --dry_run "$tmp/journal_dir"
expect 2 "journal_dir: is a folder, not a file" "$HPO" sweep --dry_run "$tmp/journal_dir"

# The trainer's files are checked before any trial starts, in the dry run and in a real sweep:
# one line naming the key and the path.
mkdir -p "$tmp/model" && cp data/bert-tiny-random/config.json "$tmp/model/" && cp data/bert-tiny-random/vocab.txt "$tmp/model/"
echo 'x' > "$tmp/train.csv" && echo 'x' > "$tmp/dev.csv"
trainer_sweep() {  # trainer_sweep NAME MODEL TRAIN EVAL: a sweep of a trainer config naming them
  printf 'model: {path: %s, pooling: mean}\ntask: {type: sts, train: %s, eval: %s, format: stsb}\n' \
    "$2" "$3" "$4" > "$tmp/$1-trainer.yaml"
  sed "s#configs/sbert_stsb.yaml#$tmp/$1-trainer.yaml#" configs/lr.yaml > "$tmp/$1.yaml"
  echo "$tmp/$1.yaml"
}
sweep=$(trainer_sweep ok "$tmp/model" "$tmp/train.csv" "$tmp/dev.csv")
"$HPO" sweep --dry_run "$sweep" >/dev/null 2>&1 || fail "the dry run refuses present trainer files"
sweep=$(trainer_sweep nomodel "$tmp/no-model" "$tmp/train.csv" "$tmp/dev.csv")
one_line_error "$HPO" sweep --dry_run "$sweep"
expect 2 "nomodel-trainer.yaml: model.path: $tmp/no-model: no such folder" "$HPO" sweep --dry_run "$sweep"
one_line_error "$HPO" sweep "$sweep" --journal "$tmp/never/j.log"   # a real sweep: before it starts
[ ! -e "$tmp/never" ] || fail "a sweep refused for its trainer files created its journal's folder"
sweep=$(trainer_sweep novocab "$tmp" "$tmp/train.csv" "$tmp/dev.csv")
expect 2 "model.path: $tmp: the model folder holds no config.json" "$HPO" sweep --dry_run "$sweep"
sweep=$(trainer_sweep notrain "$tmp/model" "$tmp/no-train.csv" "$tmp/dev.csv")
expect 2 "task.train: $tmp/no-train.csv: no such file" "$HPO" sweep --dry_run "$sweep"
sweep=$(trainer_sweep noeval "$tmp/model" "$tmp/train.csv" "$tmp/no-dev.csv")
expect 2 "task.eval: $tmp/no-dev.csv: no such file" "$HPO" sweep --dry_run "$sweep"

# A large random phase: the dry run lists 20 points and counts the rest, at once; a plan past
# 10^6 trials is refused (issue 32).
start=$(date +%s)
out=$(timeout 20 "$HPO" sweep --dry_run configs/synthetic.yaml search.random.trials=999990 2>&1); rc=$?
[ "$rc" -eq 0 ] || fail "the dry run of 999990 random trials exited $rc"
[ $(( $(date +%s) - start )) -le 5 ] || fail "the dry run of 999990 random trials took $(( $(date +%s) - start )) s"
rows=$(echo "$out" | sed -n '/random points/,$p' | grep -cE '^ +[0-9]+ +[0-9.e+-]+ +[0-9]+ +[0-9.e+-]+$')
[ "$rows" -eq 20 ] || fail "the dry run of 999990 random trials lists $rows points, want 20"
echo "$out" | grep -q '^    \.\.\. 999970 more random points$' || fail "no '... 999970 more random points'"
echo "$out" | grep -qE 'planned +at most 999996 trials' || fail "no planned count for 999990 random trials"
expect 2 "the plan holds up to 1000000006 trials; the limit is 1000000" \
  timeout 20 "$HPO" sweep --dry_run configs/synthetic.yaml search.random.trials=1000000000

# SIGTERM and SIGINT stop a dry run (here one that waits for its sweep file on a FIFO). With job
# control on (set -m), the background hpo keeps SIGINT's default action, as in a terminal.
mkfifo "$tmp/fifo.yaml"
set -m
for sig in TERM INT; do
  "$HPO" sweep --dry_run "$tmp/fifo.yaml" >/dev/null 2>&1 &
  pid=$!
  sleep 0.3
  kill "-$sig" "$pid"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    fail "SIG$sig did not stop a dry run"
    kill -9 "$pid"
  fi
  wait "$pid" 2>/dev/null
done
set +m

# Errors clip the values they echo: a 5 MB value is not a 5 MB line.
{ printf 'search: {method: '; head -c 5000000 /dev/zero | tr '\0' x; printf '}\n'
  grep -vE '^(search|  method|  random|  grid)' configs/synthetic.yaml; } > "$tmp/huge.yaml"
one_line_error "$HPO" sweep --dry_run "$tmp/huge.yaml"
err=$("$HPO" sweep --dry_run "$tmp/huge.yaml" 2>&1)
[ "${#err}" -lt 1000 ] || fail "the error for a 5 MB value is ${#err} bytes"
echo "$err" | grep -q "got 'xxxx.*\.\.\. (5000000 bytes)'" || fail "the 5 MB value is not clipped: ${err:0:300}"
big=$(head -c 100000 /dev/zero | tr '\0' y)
for args in "search.method=$big" "--$big" "--slots=$big" "--head=tcp://$big:1"; do
  err=$("$HPO" sweep --dry_run configs/synthetic.yaml "$args" 2>&1)
  [ "${#err}" -lt 1000 ] || fail "the error for a 100 KB argument ${args:0:10}... is ${#err} bytes"
done

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all CLI checks passed"
