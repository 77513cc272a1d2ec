#!/usr/bin/env bash
# Dev mode supervises its head and agent (hpo/dev_cluster.h). Two dev-mode sweeps of the
# synthetic trainer, 12 random points, 3 at a time, each trial 4 s long (no pruning):
#   1. kill -9 of the local head mid-sweep: hpo restarts it on the same endpoint and says so;
#      the agent keeps its trials and registers again, the new head adopts them, hpo registers
#      again and gets them back: nothing runs twice.
#   2. kill -9 of the local agent mid-sweep: its trainers die with it; hpo restarts it and says
#      so; the head declares the old one lost and fails its runs; hpo retries those trials.
#   3. hpo stopped (SIGSTOP) for 5 s mid-sweep, as a starved hpo: the head declares it lost but
#      keeps its running trials; hpo, continued, registers again and gets them back: nothing
#      runs twice.
# Each sweep must complete all 12 planned points (hpo exits 0 and says so), and Optuna, reading
# the journal, must find exactly one COMPLETE or PRUNED trial per point, every failed attempt
# retried on its own point. Nothing may be left behind: no process, no runtime folder.
# Args: hpo binary.
HPO=$1
source tests/integration/lib.sh
POINTS=12

# run_sweep NAME: starts a dev-mode sweep in the background (journal $WORK/NAME/journal.log,
# output $WORK/NAME.out); hpo_pid is its pid.
run_sweep() { start_synthetic_sweep "$WORK/$1.out" "$WORK/$1/journal.log" "$POINTS" 3 0.2; }
# The dev-mode processes of sweep NAME, by their command lines (which name the test's folder:
# the head's --log_dir is the sweep's log folder, the agent's --runtime_dir lies in $RUNTIME).
head_pid() { pgrep -f -- "/head --bind ipc://.* --log_dir $WORK/$1/logs( |$)" | head -1; }
agent_pid() { pgrep -f -- "/agent --head ipc://.* --runtime_dir $RUNTIME/dev-[0-9-]*/agent .*--log_dir $WORK/$1/logs( |$)" | head -1; }
trainers() { pgrep -P "$(agent_pid "$1")" 2>/dev/null | sort | tr '\n' ' '; }  # the agent's children
finished() { [ "$(grep -cE '^trial [0-9]+ (COMPLETE|PRUNED)' "$WORK/$1.out")" -ge "$2" ]; }
running() { [ -n "$(trainers "$1")" ]; }

# check_journal NAME: Optuna's view of the journal: every planned point has exactly one COMPLETE
# or PRUNED trial; every other trial is a FAIL retried on its own point (same params, linked by
# Optuna's RetryFailedTrialCallback attrs); nothing is left RUNNING. Prints the trials' count.
check_journal() {
  "$PY" - "$WORK/$1/journal.log" "$POINTS" <<'PY'
import sys
import optuna
from optuna.storages import JournalFileStorage, JournalStorage
from optuna.trial import TrialState
optuna.logging.set_verbosity(optuna.logging.WARNING)
path, points = sys.argv[1], int(sys.argv[2])
storage = JournalStorage(JournalFileStorage(path))
study = optuna.load_study(study_name=None, storage=storage)  # the journal's one study
trials = study.get_trials(deepcopy=False)
errors = []
by_point = {}
for t in trials:
    by_point.setdefault(int(t.user_attrs["point"]), []).append(t)
if sorted(by_point) != list(range(points)):
    errors.append(f"points {sorted(by_point)}, want 0..{points - 1}")
for p, ts in sorted(by_point.items()):
    done = [t.number for t in ts if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    if len(done) != 1:
        errors.append(f"point {p}: {len(done)} COMPLETE/PRUNED trials {done}, want 1")
    for t in ts:
        if t.state not in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL):
            errors.append(f"trial {t.number} (point {p}) is {t.state.name}")
        if t.state != TrialState.FAIL:
            continue
        retries = [r for r in trials if t.number in r.system_attrs.get("retry_history", [])]
        if not retries:
            errors.append(f"failed trial {t.number} (point {p}) was not retried")
        for r in retries:
            if int(r.user_attrs["point"]) != p or r.params != t.params:
                errors.append(f"trial {r.number} retries {t.number} on another point or params")
fails = [t for t in trials if t.state == TrialState.FAIL]
for t in fails:
    print(f"  failed attempt: trial {t.number} (point {t.user_attrs['point']}): "
          f"{t.user_attrs.get('fail_reason', '?')}")
for e in errors:
    print("  " + e)
print(f"{len(trials)} trials, {len(fails)} failed attempt(s), {len(errors)} error(s)")
sys.exit(1 if errors else 0)
PY
}

# finish_sweep NAME: hpo ends by itself, with every point done, nothing left behind.
finish_sweep() {
  wait "$hpo_pid"; local rc=$?
  grep -E "^dev mode|^the head|lost|^trial [0-9]+ retries|points done" "$WORK/$1.out" | sed 's/^/  /'
  [ "$rc" -eq 0 ] || fail "$1: hpo sweep exited $rc: $(tail -3 "$WORK/$1.out")"
  grep -q "$POINTS/$POINTS points done" "$WORK/$1.out" ||
    fail "$1: hpo did not say that all $POINTS points are done"
  check_journal "$1" || fail "$1: Optuna's view of the journal"
  wait_for 10 no_leftovers || fail "$1: processes left behind: $(pgrep -af "$WORK")"
  [ -z "$(ls -A "$RUNTIME" 2>/dev/null | grep '^dev-')" ] ||
    fail "$1: dev-mode folders left in $RUNTIME: $(ls "$RUNTIME")"
}

# kill_mid_sweep NAME: runs sweep NAME (head or agent) until 2 trials finished and one runs, then
# kill -9 of its dev-mode process of that name; victim is that pid, before its trainers then.
kill_mid_sweep() {
  run_sweep "$1"
  wait_for 60 finished "$1" 2 || fail "$1: no trial finished: $(tail -3 "$WORK/$1.out")"
  wait_for 20 running "$1" || fail "$1: no trial runs"
  victim=$("$1_pid" "$1")
  [ -n "$victim" ] || { fail "$1: no $1 process found"; finish; }
  before=$(trainers "$1")
  echo "$1: kill -9 of the $1 (pid $victim) while trainers $before run"
  kill -9 "$victim"
}

# --- 1. kill -9 of the head -------------------------------------------------------------------
kill_mid_sweep head
wait_for 10 grep -q "dev mode: the local head was killed by signal 9.*restarted it on ipc://" "$WORK/head.out" ||
  fail "head: hpo did not say it restarted the head: $(tail -3 "$WORK/head.out")"
new=$(head_pid head)
[ -n "$new" ] && [ "$new" != "$victim" ] || fail "head: no new head process ($new)"
wait_for 15 grep -q "the head is back (restarted)" "$WORK/head.out" ||
  fail "head: hpo did not register with the new head"
L="$WORK/head/logs/head.log"
wait_for 15 grep -q "found again: run" "$L" || fail "head: the new head handed no run back to hpo"
grep -E "adopted run|found again|running it again|agent local (registered|lost)" "$L" | sed 's/^/  /' | cut -c1-160
finish_sweep head
grep -q "running it again" "$L" && fail "head: a trial the agent held ran again"
# The trials that ran at the kill were adopted, not run again: one trial per point.
[ "$(pyq "$WORK/head/journal.log" 'len(T)')" -eq "$POINTS" ] ||
  fail "head: $(pyq "$WORK/head/journal.log" 'len(T)') trials for $POINTS points (a trial ran twice?)"

# --- 2. kill -9 of the agent ------------------------------------------------------------------
kill_mid_sweep agent
alive() { for p in $before; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
wait_for 5 eval '! alive' || fail "agent: its trainers outlived it: $(ps -o pid=,args= -p "$(echo $before | tr " " ,)")"
wait_for 15 grep -q "dev mode: the local agent was killed by signal 9.*restarted it" "$WORK/agent.out" ||
  fail "agent: hpo did not say it restarted the agent: $(tail -3 "$WORK/agent.out")"
new=$(agent_pid agent)
[ -n "$new" ] && [ "$new" != "$victim" ] || fail "agent: no new agent process ($new)"
L="$WORK/agent/logs/head.log"
grep -E "agent local (registered|lost)|refused" "$L" | sed 's/^/  /' | cut -c1-160
finish_sweep agent
grep -q "refused agent local" "$L" && fail "agent: the head refused the restarted agent"
[ "$(grep -c "agent local registered" "$L")" -eq 2 ] || fail "agent: want 2 registrations of agent local"

# --- 3. hpo stopped past the head's patience --------------------------------------------------
run_sweep stopped
wait_for 60 finished stopped 2 || fail "stopped: no trial finished: $(tail -3 "$WORK/stopped.out")"
wait_for 20 running stopped || fail "stopped: no trial runs"
echo "stopped: SIGSTOP of hpo (pid $hpo_pid) for 5 s while trainers $(trainers stopped) run"
kill -STOP "$hpo_pid"; sleep 5; kill -CONT "$hpo_pid"
L="$WORK/stopped/logs/head.log"
grep -qE "client .* lost \(no heartbeat.*it may register again within 30 s and claim its runs; keeping run" "$L" ||
  fail "stopped: the head did not keep the lost client's runs: $(grep -E "lost|cancel" "$L" | tail -3)"
wait_for 15 grep -q "found again: run" "$L" || fail "stopped: the head handed no run back to hpo"
grep -E "client .* (lost|registered again)|found again|running it again" "$L" | sed 's/^/  /' | cut -c1-160
finish_sweep stopped
grep -q "did not register again" "$L" && fail "stopped: the head cancelled a run of the client"
[ "$(pyq "$WORK/stopped/journal.log" 'len(T)')" -eq "$POINTS" ] ||
  fail "stopped: $(pyq "$WORK/stopped/journal.log" 'len(T)') trials for $POINTS points (a trial ran twice?)"
finish
