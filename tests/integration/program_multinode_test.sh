#!/usr/bin/env bash
# Issue 48: a program's trial across two hosts. A head and two agent hosts in network namespaces
# (1 slot each), so every 2-rank trial spans both:
#  1. tests/integration/program_fixture.py: each rank's torchrun environment (RANK, GROUP_RANK,
#     GROUP_WORLD_SIZE, one MASTER_ADDR:MASTER_PORT on rank 0's host, LOCAL_RANK 0 of 1 on each
#     host); a pruned trial's ranks, which ignore SIGTERM, end on both hosts by SIGKILL after
#     trainer.kill_grace_s, the one on rank 1's host too (hpo's Cancel reaches every agent);
#  2. examples/program/train_ddp.py over Gloo between the hosts: trials complete with the
#     reports of rank 0's host.
# Args: head, hpo binaries.
HEAD=$1 HPO=$2
source tests/integration/lib.sh
source tests/integration/netns_lib.sh
export PATH=/usr/bin:/bin
ROOT=$PWD
make_cluster 2 1
H=$NS_HEAD A=${NS_HOSTS[0]} B=${NS_HOSTS[1]}
# One interface name on both hosts, for Gloo's GLOO_SOCKET_IFNAME (PyTorch takes the host name's
# address otherwise, which the namespaces do not route).
for i in 0 1; do
  ip -n "${NS_HOSTS[$i]}" link set "vx$i-$$" down && ip -n "${NS_HOSTS[$i]}" link set "vx$i-$$" name tfnet0 &&
    ip -n "${NS_HOSTS[$i]}" link set tfnet0 up || { fail "cannot rename ${NS_HOSTS[$i]}'s interface"; finish; }
done
ENDPOINT="tcp://$NET.1:5555"
start_head "$WORK/head.log" "$ENDPOINT" --heartbeat_ms 1000
wait_hosts_up "$WORK/head.log" "all 2"

cat > "$WORK/fixture.yaml" <<EOF
name: fixture-2h
metric: {name: score, goal: maximize}
trainer:
  program: [python3, $ROOT/tests/integration/program_fixture.py, --lr, "{lr}", --batch, "{batch_size}",
            --trial, "{trial}", --steps, "30", --step-seconds, "0.05", --ignore-sigterm]
  workdir: $WORK
  kill_grace_s: 2
resources: {gpus_per_trial: 2}
parameters:
  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0}
  batch_size: {values: [8]}
lr_scaling: {rule: none}
search: {method: random, random: {trials: 5, seed: 3}}
early_terminate: {type: median, n_startup_trials: 2, n_warmup_steps: 0, interval_steps: 1}
max_concurrent_trials: 1
max_failures_per_trial: 0
journal: $WORK/fixture/journal.log
EOF
ip netns exec "$H" "$HPO" sweep "$WORK/fixture.yaml" --head "$ENDPOINT" > "$WORK/fixture.log" 2>&1 ||
  fail "the fixture sweep failed: $(tail -5 "$WORK/fixture.log")"
tail -3 "$WORK/fixture.log"
"$PY" - "$WORK/fixture" "$NET" <<'EOF' || fail "the fixture's environment or kill grace on two hosts"
import glob, json, sys, warnings
warnings.simplefilter("ignore")
import optuna
from optuna.storages import JournalStorage, JournalFileStorage
run, net = sys.argv[1:3]
study = optuna.load_study(study_name=None, storage=JournalStorage(JournalFileStorage(run + "/journal.log")))
bad, pruned = [], 0
for t in study.trials:
    d = "%s/trial-%d" % (run, t.number)
    envs = [json.load(open("%s/env-%d.json" % (d, r))) for r in (0, 1)]
    for r, e in enumerate(envs):
        want = {"RANK": str(r), "LOCAL_RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "1",
                "GROUP_RANK": str(r), "GROUP_WORLD_SIZE": "2", "MASTER_ADDR": net + ".2",
                "MASTER_PORT": envs[0]["MASTER_PORT"]}
        for k, v in want.items():
            if e.get(k) != v: bad.append("trial %d rank %d: %s=%r, want %r" % (t.number, r, k, e.get(k), v))
    if t.state == optuna.trial.TrialState.PRUNED:
        pruned += 1
        for r in (0, 1):  # rank 1 runs on the other host: hpo's Cancel stopped it there
            end = t.datetime_complete.timestamp() - float(open("%s/sigterm-%d" % (d, r)).read())
            if not 1.7 <= end <= 5.0: bad.append("trial %d rank %d: ended %.2f s after its SIGTERM" % (t.number, r, end))
    elif t.state != optuna.trial.TrialState.COMPLETE:
        bad.append("trial %d: %s" % (t.number, t.state))
if not pruned: bad.append("no trial was pruned")
print("two hosts: %d trials, %d pruned" % (len(study.trials), pruned))
for b in bad: print(b)
sys.exit(1 if bad else 0)
EOF

cat > "$WORK/ddp.yaml" <<EOF
name: ddp-2h
metric: {name: eval/spearman, goal: maximize}
trainer:
  program: [python3, examples/program/train_ddp.py, --lr, "{lr}", --batch-size, "{batch_size}",
            --epochs, "0.25", --eval-every, "10", --data, $ROOT/data/stsbenchmark, --out, "{trial_dir}"]
  workdir: $ROOT
resources: {gpus_per_trial: 2, env: {GLOO_SOCKET_IFNAME: tfnet0}}
parameters:
  lr: {values: [0.5, 1.0]}
  batch_size: {values: [16]}
search: {method: grid}
max_concurrent_trials: 1
max_failures_per_trial: 0
journal: $WORK/ddp/journal.log
EOF
ip netns exec "$H" "$HPO" sweep "$WORK/ddp.yaml" --head "$ENDPOINT" > "$WORK/ddp.log" 2>&1 ||
  fail "the train_ddp sweep across hosts failed: $(tail -8 "$WORK/ddp.log")"
tail -2 "$WORK/ddp.log"
expect_states "$WORK/ddp/journal.log" "['COMPLETE', 'COMPLETE']"
grep -q "placed on $A (rank 0), $B (rank 1)" "$WORK/head.log" || fail "the trials did not span both hosts: $(grep placed "$WORK/head.log" | head -2)"
stop_head
wait_for 10 agents_gone "$A" "$B" || fail "agents left after the head's shutdown"
finish
