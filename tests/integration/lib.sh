# Helpers for the end-to-end tests (sourced). They run the real binaries: hpo starts a real head
# and agent, which start real trainer processes; everything lives under a private temp folder.
set -uo pipefail
PY=/usr/bin/python3  # Debian's python3, which has optuna 3.1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
finish() {
  if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
  echo "all checks passed"
}
WORK=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tf-e2e-XXXXXX")
# Each test's own runtime root (common/runtime_dir.h): agents' locks and sockets, the head's
# default socket; tests running at once never meet there. In /tmp: a Unix socket's path holds
# at most 107 bytes, which the test's own folder may exceed.
export XDG_RUNTIME_DIR=$(mktemp -d /tmp/tf-xdg-XXXXXX)
RUNTIME="$XDG_RUNTIME_DIR/tunefleet"
# The test's home: agents serve trial folders under $HOME (launcher/agent/trial_guard.h), as under a
# user's home; Bazel runs tests without one.
export HOME="$WORK"
cleanup() {
  # Only processes this test started: those whose command line names its private folder.
  for pid in $(pgrep -f "$WORK" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  # bazel test --test_env=TF_KEEP_WORK=1 keeps the test's folder for a look afterwards.
  [ -n "${TF_KEEP_WORK:-}" ] && { echo "kept $WORK"; return; }
  rm -rf "$WORK" "$XDG_RUNTIME_DIR"
}
trap cleanup EXIT

# wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds.
wait_for() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

# no_leftovers: no process of this test is still running (head, agent, trainers).
no_leftovers() { [ -z "$(pgrep -f "$WORK" 2>/dev/null)" ]; }

# status_json JOURNAL: hpo's view of the journal.
status_json() { "$HPO" status --journal "$1" --format json; }

# jq-like one-liners over hpo's JSON view: pyq JOURNAL 'python expression over `s` (the view)'.
pyq() {
  status_json "$1" | "$PY" -c "import json,sys; s=json.load(sys.stdin); T=s['trials']; print($2)"
}

# count_state JOURNAL STATE: how many of the journal's trials are in STATE (COMPLETE, FAIL, ...).
count_state() { pyq "$1" "sum(t['state']=='$2' for t in T)"; }

# expect_states JOURNAL STATES: the journal's trials' states, in trial order, print as STATES
# (a Python list, e.g. "['FAIL', 'COMPLETE']"); a failed check names the states found.
expect_states() {
  local got; got=$(pyq "$1" "[t['state'] for t in T]")
  [ "$got" = "$2" ] || fail "journal states: $got"
}

# check_sweep_trials RUN_DIR METRIC MIN_TRIALS [KEY...]: the journal RUN_DIR/journal.log has at
# least MIN_TRIALS trials, each COMPLETE or PRUNED, and each complete trial's journal value is the
# last METRIC of its RUN_DIR/trial-N/metrics.jsonl, whose last evaluation also holds each KEY.
check_sweep_trials() {
  local run=$1 metric=$2 min=$3; shift 3
  local J="$run/journal.log" n t
  n=$(pyq "$J" 'len(T)')
  [ "$n" -ge "$min" ] || fail "expected at least $min trials, got $n"
  [ "$(pyq "$J" "sum(t['state'] in ('COMPLETE','PRUNED') for t in T)")" -eq "$n" ] ||
    fail "not every trial finished: $(pyq "$J" "[t['state'] for t in T]")"
  for t in $(pyq "$J" "' '.join(str(t['number']) for t in T if t['state']=='COMPLETE')"); do
    [ -s "$run/trial-$t/metrics.jsonl" ] || { fail "trial $t wrote no metrics.jsonl"; continue; }
    "$PY" - "$run/trial-$t/metrics.jsonl" "$(pyq "$J" "[x for x in T if x['number']==$t][0]['value']")" \
      "$metric" "$@" <<'PY' || fail "trial $t: journal and metrics.jsonl disagree"
import json, sys
path, value, metric, keys = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
evals = [json.loads(l) for l in open(path) if metric in l]
assert evals, "no evaluation"
assert abs(evals[-1][metric] - value) < 1e-6, (evals[-1], value)
for key in keys:
    assert key in evals[-1], key
PY
  done
}

# completed JOURNAL N: at least N of the journal's trials are COMPLETE.
completed() { [ "$(count_state "$1" COMPLETE)" -ge "$2" ]; }

# synthetic_sweep JOURNAL TRIALS AT_ONCE SECONDS_PER_STEP: sets the array `args` to the arguments
# of a dev-mode `hpo sweep` of the synthetic trainer (configs/synthetic.yaml): TRIALS random
# points, AT_ONCE of them at a time, no pruning, each step SECONDS_PER_STEP long.
synthetic_sweep() {
  args=(configs/synthetic.yaml --journal "$1" search.method=random search.random.trials="$2"
        max_concurrent_trials="$3" early_terminate='{type: none}' trainer.synthetic.seconds_per_step="$4")
}
# start_synthetic_sweep OUT JOURNAL TRIALS AT_ONCE SECONDS_PER_STEP: that sweep (`args` set as by
# synthetic_sweep) started in the background, its output in OUT; hpo_pid is its pid.
start_synthetic_sweep() {
  local out=$1; shift
  synthetic_sweep "$@"
  "$HPO" sweep "${args[@]}" > "$out" 2>&1 &
  hpo_pid=$!
}

# write_train_yaml FILE [SECTION.KEY=VALUE...]: a trainer config at FILE: bert-tiny-random (mean
# pooling, max_seq_len 128, dropout 0) on the STS benchmark (train on sts-train.csv, evaluate on
# sts-dev.csv), epochs 0 (so train.max_steps says how long), fp32, nothing saved, no checkpoints.
# Each SECTION.KEY=VALUE (the trainer's override syntax; SECTION is model, task, train or output;
# VALUE in YAML flow style) sets that key, or adds it after the others of its section; an empty
# VALUE leaves the key out. Each section is written as one flow mapping.
write_train_yaml() {
  local file=$1 kv key section line; shift
  local -A val=([model.path]=data/bert-tiny-random [model.pooling]=mean [model.max_seq_len]=128
    [model.dropout]=0.0 [task.type]=sts [task.train]=data/stsbenchmark/sts-train.csv
    [task.eval]=data/stsbenchmark/sts-dev.csv [task.format]=stsb [train.epochs]=0
    [train.precision]=fp32 [output.save]=none [output.checkpoint]=false)
  local keys=(model.path model.pooling model.max_seq_len model.dropout task.type task.train task.eval
    task.format train.epochs train.precision output.save output.checkpoint)
  for kv; do
    key=${kv%%=*}
    [ -n "${val[$key]+set}" ] || keys+=("$key")
    val[$key]=${kv#*=}
  done
  for section in model task train output; do
    line=
    for key in "${keys[@]}"; do
      [ "${key%%.*}" = "$section" ] && [ -n "${val[$key]}" ] && line+="${line:+, }${key#*.}: ${val[$key]}"
    done
    echo "$section: {$line}"
  done > "$file"
}

# write_ddp_train_yaml FILE [SECTION.KEY=VALUE...]: write_train_yaml's config that the data-
# parallel checks train, once in one process with batch 16 and once on 2 ranks of batch 8, to
# compare them (compare_runs.py): the first 480 STS pairs ($WORK/sts480.csv, written here) in
# file order, 24 steps with evaluations at 12 and 24, lr 1e-4 (linear, 10% warmup), gradients
# clipped at 1.0, the ranks' timeout 60 s, the last weights saved.
write_ddp_train_yaml() {
  local file=$1; shift
  head -480 data/stsbenchmark/sts-train.csv > "$WORK/sts480.csv"
  write_train_yaml "$file" task.train="$WORK/sts480.csv" train.max_steps=24 train.batch_size=16 \
    train.lr=1.0e-4 train.warmup_ratio=0.1 train.schedule=linear train.shuffle=false \
    train.eval_every_steps=12 train.log_every_steps=1 train.max_grad_norm=1.0 train.ddp_timeout_s=60 \
    output.save=last "$@"
}

# write_sweep_yaml FILE [KEY=VALUE...]: a sweep file at FILE: maximise eval/spearman, train with
# $WORK/train.yaml, lr scaled linearly from batch 32, no pruning, one trial at a time, journal
# $WORK/run/journal.log. Each KEY=VALUE (VALUE in YAML flow style) sets that top-level key or adds
# one; parameters.NAME=VALUE adds NAME to the search space (in the order given); an empty VALUE
# leaves the key out.
write_sweep_yaml() {
  local file=$1 kv key params=(); shift
  local -A val=([metric]='{name: eval/spearman, goal: maximize}' [trainer]="{config: $WORK/train.yaml}"
    [lr_scaling]='{rule: linear, base_batch: 32}' [early_terminate]='{type: none}'
    [max_concurrent_trials]=1 [journal]="$WORK/run/journal.log")
  local keys=(name metric trainer resources parameters lr_scaling search early_terminate
    max_concurrent_trials max_failures_per_trial journal)
  for kv; do
    key=${kv%%=*}
    case $key in
      parameters.*) params+=("  ${key#parameters.}: ${kv#*=}") ;;
      *) [[ " ${keys[*]} " == *" $key "* ]] || keys+=("$key"); val[$key]=${kv#*=} ;;
    esac
  done
  for key in "${keys[@]}"; do
    if [ "$key" = parameters ]; then
      [ "${#params[@]}" -eq 0 ] || { echo "parameters:"; printf '%s\n' "${params[@]}"; }
    elif [ -n "${val[$key]:-}" ]; then
      echo "$key: ${val[$key]}"
    fi
  done > "$file"
}
