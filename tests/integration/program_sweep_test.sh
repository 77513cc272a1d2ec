#!/usr/bin/env bash
# Issue 48: a training program of the user's own as a sweep's trials (trainer.program), in dev
# mode, with real processes all the way:
#  1. examples/program/train_ddp.py (PyTorch DDP over Gloo, 2 ranks a trial) with
#     configs/program_ddp.yaml: every trial's reports are its intermediate values in the
#     journal as Optuna reads it, the median pruner stops a trial and its ranks are gone,
#     `hpo best` writes its command, nothing is left running;
#  2. tests/integration/program_fixture.py: torchrun's environment on each rank (per_rank and
#     launch: once), the templates and trainer.env, a line that is not JSON warned about by its
#     number, pruned ranks that ignore SIGTERM killed after trainer.kill_grace_s, not before;
#  3. a failing program: its stderr's last 20 lines in hpo's output, retried per
#     max_failures_per_trial; exit 0 without a report: failed, saying so;
#  4. bad sweep files: one line, exit 2 (an unknown {X}, a missing program, sharing a GPU
#     without trainer.gpu_memory_mib).
#  5. an agent started with --noprograms refuses a program's trial, saying so.
# Args: hpo binary, journal_optuna_check.py, head binary, agent binary.
HPO=$1 CHECK=$2 HEAD=$3 AGENT=$4
source tests/integration/lib.sh
source tests/integration/expect_lib.sh
# The programs run on Debian's python3 (python3-torch, python3-optuna).
export PATH=/usr/bin:/bin
ROOT=$PWD
FIXTURE=$ROOT/tests/integration/program_fixture.py

# --- 1. The real example --------------------------------------------------------------------
J=$WORK/ddp/journal.log
out=$("$HPO" sweep configs/program_ddp.yaml --journal "$J" --report_json "$WORK/ddp.json" 2>"$WORK/ddp.err"); rc=$?
echo "$out" | tail -4
[ "$rc" -eq 0 ] || { fail "the program_ddp sweep exited $rc: $(tail -5 "$WORK/ddp.err")"; finish; }
echo "$out" | grep -qE '^best trial #[0-9]+: eval/spearman=0\.[0-9]+' || fail "no best trial"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
# Optuna reads the journal as hpo saw it; each trial's intermediate values are the lines its
# rank 0 reported (samples -> eval/spearman), all of them.
"$PY" "$CHECK" "$J" "$WORK/ddp.json" || fail "Optuna's view of the journal differs from hpo's"
"$PY" - "$J" "$WORK/ddp" <<'EOF' || fail "intermediate values differ from the reports"
import json, os, sys, warnings
warnings.simplefilter("ignore")
import optuna
from optuna.storages import JournalStorage, JournalFileStorage
journal, run = sys.argv[1], sys.argv[2]
study = optuna.load_study(study_name=None, storage=JournalStorage(JournalFileStorage(journal)))
bad = 0
pruned = 0
for t in study.trials:
    lines = [json.loads(l) for l in open(os.path.join(run, "trial-%d" % t.number, ".tunefleet", "reports.jsonl"))]
    want = {l["samples"]: l["eval/spearman"] for l in lines}
    if t.state == optuna.trial.TrialState.PRUNED:
        pruned += 1
        # Stopped at its last report: nothing reported after the decision counts.
        want = {k: v for k, v in want.items() if k <= max(t.intermediate_values)}
    if t.intermediate_values != want or not want:
        print("trial %d: journal %s, reports %s" % (t.number, t.intermediate_values, want)); bad += 1
    if t.state == optuna.trial.TrialState.COMPLETE and t.value != lines[-1]["eval/spearman"]:
        print("trial %d: value %s, last report %s" % (t.number, t.value, lines[-1])); bad += 1
print("%d trials, %d pruned, %d mismatches" % (len(study.trials), pruned, bad))
sys.exit(1 if bad or pruned == 0 or len(study.trials) < 6 else 0)
EOF
# Every rank of every trial, pruned ones included, has exited.
for f in "$WORK"/ddp/trial-*/pids/rank-*; do
  kill -0 "$(cat "$f")" 2>/dev/null && fail "$f: pid $(cat "$f") still runs"
done
[ "$(ls "$WORK"/ddp/trial-0/pids | wc -l)" -eq 2 ] || fail "trial 0 did not run 2 ranks"
best=$("$HPO" best --journal "$J")
echo "$best" | grep -qE "^re-run: mkdir -p [^ ]+/trial-[0-9]+-rerun && cd $ROOT && .*TUNEFLEET_PARAMS=.*torchrun --nproc_per_node=2 --no-python python3 examples/program/train_ddp.py --lr [0-9.e-]+ --batch-size (16|32) " ||
  fail "hpo best: no re-run command: $best"

# --- 2. The fixture: environment, templates, warnings, the kill grace ----------------------
# fixture_yaml NAME "EXTRA ARGS" TRIALS FAILURES [TRAINER KEY LINE] [RESOURCES]: $WORK/NAME.yaml.
fixture_yaml() {
  local name=$1 extra=$2 trials=$3 failures=$4 more=${5:-} resources=${6:-"{gpus_per_trial: 2}"}
  cat > "$WORK/$name.yaml" <<EOF
name: $name
metric: {name: score, goal: maximize}
trainer:
  program: [python3, $FIXTURE, --lr, "{lr}", --batch, "{batch_size}", --trial, "{trial}",
            --steps, "30", --step-seconds, "0.05"$extra]
  env: {FIXTURE_TAG: "t{trial}-{lr_base}-{{x}}", FIXTURE_DIR: "{trial_dir}"}
  workdir: $WORK
  kill_grace_s: 2
  $more
resources: $resources
parameters:
  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0}
  batch_size: {values: [8]}
lr_scaling: {rule: none}
search: {method: random, random: {trials: $trials, seed: 3}}
early_terminate: {type: median, n_startup_trials: 2, n_warmup_steps: 0, interval_steps: 1}
max_concurrent_trials: 2
max_failures_per_trial: $failures
journal: $WORK/$name/journal.log
EOF
}
fixture_yaml fixture ", --ignore-sigterm, --bad-line" 7 0
dry=$("$HPO" sweep "$WORK/fixture.yaml" --dry_run 2>&1) || fail "dry run failed: $dry"
echo "$dry" | grep -qE "^  first trial   FIXTURE_DIR=$WORK/fixture/trial-0 FIXTURE_TAG='t0-[0-9.e-]+-\{x\}' python3 $FIXTURE --lr [0-9.e-]+ --batch 8 --trial 0 " ||
  fail "the dry run does not show the first trial's command: $dry"
out=$("$HPO" sweep "$WORK/fixture.yaml" 2>"$WORK/fixture.err"); rc=$?
echo "$out" | tail -3
[ "$rc" -eq 0 ] || fail "the fixture sweep exited $rc: $(tail -5 "$WORK/fixture.err")"
echo "$out" | grep -qE "^trial 0: TUNEFLEET_METRICS line 1: not valid JSON.*'this is not JSON'; skipped" ||
  fail "no warning naming the line that is not JSON: $out"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
"$PY" - "$WORK/fixture" "$FIXTURE" "$WORK" <<'EOF' || fail "the fixture's environment or kill grace"
import datetime, glob, json, os, sys, warnings
warnings.simplefilter("ignore")
import optuna
from optuna.storages import JournalStorage, JournalFileStorage
run, fixture, workdir = sys.argv[1:4]
study = optuna.load_study(study_name=None, storage=JournalStorage(JournalFileStorage(run + "/journal.log")))
bad = []
def check(cond, what):
    if not cond: bad.append(what)
pruned_ignoring = 0
for t in study.trials:
    d = "%s/trial-%d" % (run, t.number)
    envs = [json.load(open("%s/env-%d.json" % (d, r))) for r in (0, 1)]
    for r, e in enumerate(envs):
        check(e["RANK"] == str(r) and e["LOCAL_RANK"] == str(r), "trial %d rank %d: RANK/LOCAL_RANK" % (t.number, r))
        for k, v in (("WORLD_SIZE", "2"), ("LOCAL_WORLD_SIZE", "2"), ("GROUP_RANK", "0"),
                     ("GROUP_WORLD_SIZE", "1"), ("CUDA_VISIBLE_DEVICES", ""),
                     ("TUNEFLEET_TRIAL_DIR", d), ("TUNEFLEET_METRICS", d + "/.tunefleet/reports.jsonl"),
                     ("FIXTURE_DIR", d), ("CWD", workdir)):
            check(e.get(k) == v, "trial %d rank %d: %s=%r, want %r" % (t.number, r, k, e.get(k), v))
        check(e["MASTER_ADDR"] and e["MASTER_PORT"] == envs[0]["MASTER_PORT"], "master")
        p = json.loads(e["TUNEFLEET_PARAMS"])
        check(p == {"lr": t.params["lr"], "batch_size": 8, "lr_effective": t.user_attrs["lr_effective"]},
              "trial %d: TUNEFLEET_PARAMS %s" % (t.number, p))
        check(e["FIXTURE_TAG"] == "t%d-%s-{x}" % (t.number, repr(t.params["lr"])), "trial %d: FIXTURE_TAG %s" % (t.number, e["FIXTURE_TAG"]))
        argv = json.loads(e["ARGV"])
        check(argv[argv.index("--lr") + 1] == repr(t.user_attrs["lr_effective"]), "trial %d: --lr %s" % (t.number, argv))
    check(len(t.intermediate_values) >= 1, "trial %d: no intermediate values" % t.number)
    if t.state == optuna.trial.TrialState.PRUNED:
        # Each rank noted its SIGTERM and went on; SIGKILL came kill_grace_s (2 s) later.
        for r in (0, 1):
            term = float(open("%s/sigterm-%d" % (d, r)).read())
            end = t.datetime_complete.timestamp()
            check(1.7 <= end - term <= 5.0, "trial %d rank %d: ended %.2f s after its SIGTERM (grace 2 s)" % (t.number, r, end - term))
        pruned_ignoring += 1
    else:
        check(t.state == optuna.trial.TrialState.COMPLETE, "trial %d: %s" % (t.number, t.state))
        check(not glob.glob(d + "/sigterm-*"), "trial %d completed but got a SIGTERM" % t.number)
check(pruned_ignoring >= 1, "no trial was pruned")
print("fixture: %d trials, %d pruned" % (len(study.trials), pruned_ignoring))
for b in bad: print(b)
sys.exit(1 if bad else 0)
EOF

# launch: once: one process for the node's ranks, torchrun's settings as PET_*.
fixture_yaml once "" 1 0 "launch: once"
"$HPO" sweep "$WORK/once.yaml" > "$WORK/once.out" 2>&1 || fail "launch: once sweep failed: $(tail -5 "$WORK/once.out")"
"$PY" - "$WORK/once/trial-0" <<'EOF' || fail "launch: once environment"
import glob, json, sys
envs = glob.glob(sys.argv[1] + "/env-*.json")
e = json.load(open(envs[0]))
want = {"WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0", "PET_NNODES": "1",
        "PET_NPROC_PER_NODE": "2", "PET_NODE_RANK": "0", "CUDA_VISIBLE_DEVICES": ""}
bad = [k for k, v in want.items() if e.get(k) != v] + [k for k in ("RANK", "LOCAL_RANK") if k in e]
bad += [] if e["PET_MASTER_PORT"] == e["MASTER_PORT"] and len(envs) == 1 else ["one process, one master"]
print("launch once:", "ok" if not bad else bad)
sys.exit(1 if bad else 0)
EOF

# --- 3. Failures --------------------------------------------------------------------------
fixture_yaml fail ", --fail" 1 1
out=$("$HPO" sweep "$WORK/fail.yaml" 2>&1); rc=$?
[ "$rc" -eq 3 ] || fail "a failing program's sweep exited $rc, want 3"
echo "$out" | grep -qE "^trial 0 FAIL" || fail "no FAIL line: $out"
echo "$out" | grep -q "last 20 lines of stderr:" || fail "no 20 lines of stderr: $out"
echo "$out" | grep -qE "^    RuntimeError: the fixture fails as asked \(trial 0\)" || fail "no traceback: $out"
echo "$out" | grep -q "fixture stderr line 29" || fail "not the last lines: $out"
echo "$out" | grep -q "fixture stderr line 10" && fail "more than 20 lines: $out"
echo "$out" | grep -qE "^trial 1 FAIL" || fail "the failed trial was not retried: $out"
fixture_yaml silent ", --no-report" 1 0
expect 3 "finished without reporting score" "$HPO" sweep "$WORK/silent.yaml"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"

# --- 4. Bad sweep files: one line, exit 2 -------------------------------------------------
fixture_yaml typo "" 1 0
sed -i 's/"{trial}",/"{trail}",/' "$WORK/typo.yaml"
one_line_error "$HPO" sweep "$WORK/typo.yaml"
expect 2 "typo.yaml:[0-9]+: trainer.program: argument 8 \('\{trail\}'\): \{trail\} is not a parameter" "$HPO" sweep "$WORK/typo.yaml"
fixture_yaml missing "" 1 0
sed -i "s#python3, $FIXTURE#python4-nowhere, x.py#" "$WORK/missing.yaml"
expect 2 "missing.yaml: trainer.program: python4-nowhere: not found on PATH" "$HPO" sweep "$WORK/missing.yaml"
fixture_yaml share "" 1 0 "" "{gpus_per_trial: 1, trials_per_gpu: 2}"
expect 2 "share.yaml:[0-9]+: resources.trials_per_gpu: a program shares a GPU only when it declares its peak GPU memory" "$HPO" sweep "$WORK/share.yaml"
for refused in typo missing share; do
  [ ! -e "$WORK/$refused" ] || fail "the refused $refused.yaml left a folder"
done
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"

# --- 5. An agent that runs tunefleet's trainer only ------------------------------------------
"$HEAD" --endpoint_file "$WORK/endpoint" 2>"$WORK/head.log" & head_pid=$!
wait_for 5 test -s "$WORK/endpoint" || fail "the head did not bind: $(cat "$WORK/head.log")"
"$AGENT" --head "$(cat "$WORK/endpoint")" --slots 2 --name np --noprograms 2>"$WORK/agent.log" &
agent_pid=$!
fixture_yaml noprog "" 1 0
expect 3 "trial 0 FAIL .*this agent runs tunefleet's trainer only \(agent --noprograms\)" \
  "$HPO" sweep "$WORK/noprog.yaml" --head "$(cat "$WORK/endpoint")"
kill -TERM "$agent_pid" "$head_pid"; wait "$agent_pid" "$head_pid" 2>/dev/null
finish
