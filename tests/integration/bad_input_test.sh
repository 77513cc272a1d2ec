#!/usr/bin/env bash
# Issue 32's table of bad inputs (items 5-8): each gets one clear line and its exit code, and
# none crashes or hangs (every command runs under a timeout). The limits: a plan of more than
# 10^6 trials, more ranks per trial than dev mode's host or the cluster has, batch sizes past
# 2^20 or past what the memory estimate says this host can hold, agent flags out of range. The
# wording and exit codes: journals that cannot be written or resumed, folders given for files,
# a journal whose completed values are NaN, terminal escapes in a journal, SIGTERM while the
# head is lost (and the resume hint), an invalid config.json (before the sweep), a trainer's
# usage error (not retried), a dev-mode folder a killed sweep left, a dropped output.dir.
# Args: paths of head, agent, hpo, trainer.
HEAD=$1 AGENT=$2 HPO=$3 TRAINER=$4
source tests/integration/lib.sh
source tests/integration/expect_lib.sh
T=$WORK
S=$XDG_RUNTIME_DIR  # short: a Unix socket's path holds at most 107 bytes
# t SECONDS CMD...: CMD under a timeout (a hang fails the test rather than stalls it).
t() { timeout "$@"; }

# --- 5. plans -------------------------------------------------------------------------------
expect 2 "the plan holds up to 400000000 trials; the limit is 1000000" \
  t 20 "$HPO" sweep --dry_run configs/synthetic.yaml search.method=grid search.grid.lr_points=100000000
one_line_error t 20 "$HPO" sweep configs/synthetic.yaml search.random.trials=2000000 --journal "$T/p/j.log"
[ ! -e "$T/p" ] || fail "a refused plan made its journal's folder"
expect 0 "planned +at most 400000 trials" t 20 "$HPO" sweep --dry_run configs/synthetic.yaml \
  search.method=grid search.grid.lr_points=100000

# --- 6. caps ----------------------------------------------------------------------------------
# Dev mode: more ranks than this host has, refused before any process starts.
expect 2 "resources.gpus_per_trial: 100000 ranks per trial, but dev mode runs on this host, which has" \
  t 20 "$HPO" sweep configs/synthetic.yaml resources.gpus_per_trial=100000 --journal "$T/r/j.log"
[ ! -e "$T/r" ] || fail "a refused sweep made its journal's folder"
[ -z "$(pgrep -f "$T/r" 2>/dev/null)" ] || fail "a refused sweep left processes"
# Batch sizes past 2^20: the sweep file and the trainer config.
expect 2 "batch sizes must be at most 1048576 \\(2\\^20\\), got 100000000000" \
  t 20 "$HPO" sweep --dry_run configs/synthetic.yaml 'parameters.batch_size.values=[100000000000]'
expect 2 "train.batch_size: must be at most 1048576 \\(2\\^20\\), got 100000000000" \
  t 20 "$TRAINER" train --config configs/sbert_stsb.yaml train.batch_size=100000000000
# A dev-mode sweep whose batch size cannot fit this host by the memory estimate is refused
# before it starts. A bert-large-shaped config.json (no weights needed: the check reads the
# shape) at 2^20 examples needs about 6.5 TiB even at 2 tokens a sequence, more than any GPU or
# host. (The trainer's own check at its start: memory_estimate_test.)
mkdir -p "$T/large"
cp data/bert-tiny-random/vocab.txt "$T/large/"
"$PY" - data/bert-tiny-random/config.json "$T/large/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
json.dump(c, open(sys.argv[2], "w"))
PY
expect 2 "configs/lr.yaml: parameters.batch_size: 1048576 examples a step need at least [0-9.]+ GiB even at 2 tokens a sequence \(the trainer's memory estimate\), more than (this host's|the GPU's)" \
  t 60 "$HPO" sweep configs/lr.yaml "trainer.overrides={model.path: $T/large, train.precision: fp32}" \
  'parameters.batch_size.values=[32, 1048576]' --journal "$T/bigb/j.log"
[ ! -e "$T/bigb" ] || fail "a sweep refused for its batch size made its journal's folder"
[ -z "$(pgrep -f "$T/bigb" 2>/dev/null)" ] || fail "a sweep refused for its batch size left processes"
# Dev mode starts its head and agent (and prewarms workers) while the trainer checks its config:
# a config the trainer refuses stops them again and removes the folders they made.
expect 2 "configs/lr.yaml: trainer.config: configs/sbert_stsb.yaml: override 'train.warmup_ratio=7': train.warmup_ratio: must be in \[0, 1\], got 7" \
  t 60 "$HPO" sweep configs/lr.yaml "trainer.overrides={train.warmup_ratio: 7}" --journal "$T/badt/j.log"
[ ! -e "$T/badt" ] || fail "a sweep the trainer refused left $(find "$T/badt" | head -5)"
[ -z "$(pgrep -f "$T/badt" 2>/dev/null)" ] || fail "a sweep the trainer refused left processes"
# Agent flags.
for flags in "--slots 100000000" "--kill_grace_ms=-1" "--head_grace_s 99999999" \
    "--trainer /nonexistent" "--trainer /etc/passwd" "--runtime_dir /etc/passwd"; do
  # shellcheck disable=SC2086
  one_line_error t 10 "$AGENT" --head "ipc://$S/none.sock" $flags
done
expect 2 "--slots must be between 0 and 4096" t 10 "$AGENT" --head "ipc://$S/none.sock" --slots 100000000
expect 2 "--trainer /nonexistent: No such file or directory" t 10 "$AGENT" --head "ipc://$S/none.sock" --trainer /nonexistent
expect 2 "--slots must be between 0 and 4096" t 10 "$HPO" sweep configs/synthetic.yaml --slots 100000000

# A cluster too small for the sweep's trials: the head fails the run, hpo stops the sweep (exit 2).
"$HEAD" --bind "ipc://$S/head.sock" --start_agents none --log_dir "$T/headlogs" > "$T/head.out" 2>&1 &
head_pid=$!
"$AGENT" --head "ipc://$S/head.sock" --slots 1 --name one --runtime_dir "$T/agent" > "$T/agent.out" 2>&1 &
agent_pid=$!
wait_for 20 grep -q "agent one registered" "$T/head.out" || fail "the agent did not register: $(tail -3 "$T/head.out")"
expect 2 "the cluster cannot run this sweep's trials: needs 2 ranks but the cluster has 1 slots \\(resources.gpus_per_trial: 2\\)" \
  t 60 "$HPO" sweep configs/synthetic.yaml --head "ipc://$S/head.sock" resources.gpus_per_trial=2 \
  search.method=random search.random.trials=2 --journal "$T/small/j.log"

# SIGTERM while the head is lost: hpo exits at once (not after 15 s), and its hint to continue
# names the head.
"$HPO" sweep configs/synthetic.yaml --head "ipc://$S/head.sock" search.method=random \
  search.random.trials=2 trainer.synthetic.seconds_per_step=5 --journal "$T/lost/j.log" \
  --head_grace_s 300 > "$T/lost.out" 2>&1 &
hpo_pid=$!
wait_for 20 grep -q "placed on one" "$T/head.out" || fail "no trial was placed: $(tail -3 "$T/lost.out")"
kill -9 "$head_pid"; wait "$head_pid" 2>/dev/null
wait_for 10 grep -q "lost the head" "$T/lost.out" || fail "hpo did not notice the lost head: $(tail -3 "$T/lost.out")"
start=$(date +%s%N)
kill -TERM "$hpo_pid"; wait "$hpo_pid"; rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$rc" -eq 130 ] || fail "SIGTERM with the head lost: exit $rc, want 130"
[ "$took" -le 3000 ] || fail "SIGTERM with the head lost took $took ms"
grep -q "interrupted while the head is lost" "$T/lost.out" || fail "no line about the lost head: $(tail -5 "$T/lost.out")"
grep -qE "^interrupted; continue with: $HPO sweep configs/synthetic.yaml .*--resume --journal $T/lost/j.log --head ipc://$S/head.sock$" "$T/lost.out" ||
  fail "the resume hint: $(grep 'continue with' "$T/lost.out")"
echo "SIGTERM with the head lost: exit $rc after $took ms"
kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null

# --- 7. JSON nested past 1,000 (a deep line, then a valid one)
synthetic_sweep "$T/ok0.log" 1 1 0
t 60 "$HPO" sweep "${args[@]}" trainer.synthetic.steps=1 > "$T/ok0.out" 2>&1 || fail "a one-trial sweep: $(tail -3 "$T/ok0.out")" ------------------------------------------------------------------
"$PY" -c "print('{\"op_code\": 0, \"worker_id\": \"w\", \"study_name\": \"s\", \"directions\": [1], \"x\": ' + '[' * 100000 + ']' * 100000 + '}')" > "$T/deep.log"
head -1 "$T/ok0.log" >> "$T/deep.log"  # a line after it: the deep one is not a torn last line
expect 2 "nested more than 1000 deep" t 20 "$HPO" status --journal "$T/deep.log"

# --- 8. wording and exit codes -------------------------------------------------------------------
# A small journal to work from.
synthetic_sweep "$T/ok/j.log" 2 2 0
t 60 "$HPO" sweep "${args[@]}" trainer.synthetic.steps=2 > "$T/ok.out" 2>&1 || fail "the small sweep: $(tail -3 "$T/ok.out")"
one_line_error t 20 "$HPO" sweep configs/synthetic.yaml --journal /proc/self/x.log
expect 2 "journal /proc/self/x.log: cannot create files in /proc/self" t 20 "$HPO" sweep configs/synthetic.yaml --journal /proc/self/x.log
echo garbage > "$T/garbage.log"
expect 2 "--resume: journal $T/garbage.log holds no study" t 20 "$HPO" sweep configs/synthetic.yaml --journal "$T/garbage.log" --resume
expect 2 "--resume: journal $T/ok/j.log holds sweep 'synthetic-demo', not 'other'" \
  t 20 "$HPO" sweep configs/synthetic.yaml name=other --journal "$T/ok/j.log" --resume
expect 2 "--resume: journal $T/ok/j.log was made for the other metric goal" \
  t 20 "$HPO" sweep configs/synthetic.yaml metric.goal=minimize --journal "$T/ok/j.log" --resume
for cmd in "sweep configs/synthetic.yaml --journal $T/garbage.log --resume" \
    "sweep configs/synthetic.yaml metric.goal=minimize --journal $T/ok/j.log --resume"; do
  # shellcheck disable=SC2086
  one_line_error t 20 "$HPO" $cmd
done
expect 2 "$T: is a folder" t 20 "$HPO" report --journal "$T/ok/j.log" --output "$T"
expect 2 "is a folder, not a dataset file" t 60 "$TRAINER" train --config configs/sbert_stsb.yaml task.train="$T" \
  output.dir="$T/tt" output.save=none
expect 2 "--runtime_dir: /etc/passwd: is not a folder" t 10 "$AGENT" --head "ipc://$S/none.sock" --runtime_dir /etc/passwd
expect 2 "$T: is a folder, not a hosts file" t 10 "$HEAD" --nodes "$T" --start_agents none
: > "$T/empty.log"
expect 2 "$T/empty.log: the journal holds no study yet" t 20 "$HPO" status --journal "$T/empty.log"
# Completed trials whose values are NaN.
sed -E 's/"values": \[[^]]*\]/"values": [NaN]/' "$T/ok/j.log" > "$T/nan.log"
expect 1 "$T/nan.log: 2 trial\\(s\\) completed, all with a NaN value" t 20 "$HPO" best --journal "$T/nan.log"
# Terminal escapes in a journal's fields reach no terminal.
"$PY" - "$T/ok/j.log" "$T/esc.log" <<'PY'
import json, sys
out = []
for line in open(sys.argv[1]):
    op = json.loads(line)
    if op.get("op_code") == 8 and "user_attr" in op:  # SET_TRIAL_USER_ATTR
        op["user_attr"] = {k: "\x1b]0;owned\x07\x1b[31m\u009b31m" + v if isinstance(v, str) else v
                           for k, v in op["user_attr"].items()}
    out.append(json.dumps(op))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
grep -q '\\u001b' "$T/esc.log" || fail "the escaped journal holds no escape"
t 20 "$HPO" status --journal "$T/esc.log" > "$T/esc.out" 2>&1 || fail "hpo status of the escaped journal: $(tail -2 "$T/esc.out")"
if grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$T/esc.out"; then
  fail "hpo status printed control characters: $(grep -aP '[\x00-\x08\x0b-\x1f\x7f]' "$T/esc.out" | cat -v | head -2)"
fi
grep -q '\\x1b' "$T/esc.out" || fail "hpo status shows no visible escape: $(head -5 "$T/esc.out")"
# An invalid config.json fails before the sweep, not in each trial.
mkdir -p "$T/m"; cp data/bert-tiny-random/* "$T/m/"; echo '{"hidden_size": "x"' > "$T/m/config.json"
write_train_yaml "$T/train.yaml" model.path="$T/m" train.max_steps=2
write_sweep_yaml "$T/badmodel.yaml" name=badmodel parameters.lr='{values: [1.0e-4]}' \
  parameters.batch_size='{values: [16]}' journal="$T/badmodel/j.log"
expect 2 "model.path: $T/m/config.json: invalid JSON" t 20 "$HPO" sweep "$T/badmodel.yaml"
[ ! -e "$T/badmodel" ] || fail "the refused sweep made its journal's folder"
# A trainer's usage error (exit 2: a dataset it cannot parse) is not retried.
printf 'not\ta\tdataset\n' > "$T/bad.csv"
write_train_yaml "$T/train.yaml" task.train="$T/bad.csv" train.max_steps=2
write_sweep_yaml "$T/usage.yaml" name=usage parameters.lr='{values: [1.0e-4, 2.0e-4]}' \
  parameters.batch_size='{values: [16]}' search='{method: grid}' journal="$T/usage/j.log"
t 120 "$HPO" sweep "$T/usage.yaml" > "$T/usage.out" 2>&1; rc=$?
[ "$rc" -eq 3 ] || fail "a sweep whose trials all fail: exit $rc, want 3: $(tail -3 "$T/usage.out")"
[ "$(pyq "$T/usage/j.log" 'len(T)')" -eq 2 ] ||
  fail "usage errors retried: $(pyq "$T/usage/j.log" 'len(T)') trials for 2 points"
[ "$(grep -c "not retried: the same trial would fail the same way" "$T/usage.out")" -eq 2 ] ||
  fail "no 'not retried' lines: $(grep -E '^trial|retr' "$T/usage.out")"
grep -q "last stderr: trainer train: error: " "$T/usage.out" || fail "no trainer error shown: $(tail -5 "$T/usage.out")"
# A user's output.dir is dropped with a note.
expect 0 "note +trainer.overrides output.dir \\($T/mine\\): not used" \
  t 20 "$HPO" sweep --dry_run "$T/usage.yaml" "trainer.overrides={output.dir: $T/mine}"
# A dev-mode folder that a killed sweep left is removed by the next sweep.
start_synthetic_sweep "$T/killed.out" "$T/killed/j.log" 2 1 5
wait_for 20 eval 'ls -d "$RUNTIME"/dev-* >/dev/null 2>&1' || fail "no dev-mode folder: $(ls "$RUNTIME")"
left=$(ls -d "$RUNTIME"/dev-* | head -1)
kill -9 "$hpo_pid"; wait "$hpo_pid" 2>/dev/null
wait_for 15 no_leftovers || fail "the killed sweep's processes stayed: $(pgrep -af "$WORK")"
[ -d "$left" ] || fail "kill -9 left no folder to clean ($left)"
synthetic_sweep "$T/after/j.log" 1 1 0
t 60 "$HPO" sweep "${args[@]}" trainer.synthetic.steps=1 > "$T/after.out" 2>&1 || fail "the next sweep: $(tail -3 "$T/after.out")"
[ ! -e "$left" ] || fail "the next sweep left $left in place"
finish
