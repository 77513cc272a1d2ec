#!/usr/bin/env bash
# `head --start_agents slurm` and configs/slurm/sweep.sbatch against a real Slurm: Debian's
# slurm-wlm 22.05 (slurmctld and slurmd, started here on localhost with auth/none, the test's own
# ports and folders, and 2 GPUs as gres backed by device nodes that are /dev/null, so jobs get
# SLURM_GPUS_ON_NODE=2; without mknod, no gres), stopped at the end:
#  1. outside an allocation the head refuses --start_agents slurm in one line (exit 2);
#  2. `sbatch --wait --gres=gpu:2 sweep.sbatch synthetic.yaml` runs the whole sweep in one job: the
#     head reads the allocation (1 node, 2 GPUs each from SLURM_GPUS_ON_NODE), starts the agent
#     as one srun job step, says `host NODE: agent up`, the agent registers with 2 slots, hpo
#     finishes every point; afterwards no job, no job step and no agent is left;
#  3. an agent that cannot start: the head says why for the host (the step's exit code and the
#     last line of the node's own log);
#  4. --include / --exclude through TUNEFLEET_HEAD_ARGS: one-line errors for a GPU past the
#     host's slots and for a filter that leaves no host;
#  5. the head killed (SIGKILL) inside a job: its job step of agents ends with it.
# Needs root (slurmd runs the jobs; CI runs tests as root). Args: head, agent, hpo, trainer.
HEAD=$(realpath "$1") AGENT=$(realpath "$2") HPO=$(realpath "$3") TRAINER=$(realpath "$4")
SBATCH_SCRIPT=$PWD/configs/slurm/sweep.sbatch
source tests/integration/lib.sh
[ "$(id -u)" -eq 0 ] || { fail "needs root: slurmd runs the test's jobs as root"; finish; }
for b in slurmctld slurmd sbatch squeue sinfo scontrol scancel srun; do
  command -v "$b" > /dev/null || { fail "no $b: scripts/setup.sh --tests installs slurmctld, slurmd and slurm-client"; finish; }
done
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- a one-node Slurm cluster on localhost -----------------------------------------------
# In /tmp: slurmd makes Unix sockets in its spool folder (108 bytes at most), which the test's
# own folder may exceed.
S=$(mktemp -d /tmp/tf-slurm-XXXXXX)
mkdir -p "$S/state" "$S/spool"
node=$(hostname -s)
gres_conf="" node_gres=""
if mknod "$S/gpu0" c 1 3 2>/dev/null && mknod "$S/gpu1" c 1 3 2>/dev/null; then
  gres_conf="GresTypes=gpu" node_gres="Gres=gpu:2"
  echo "NodeName=$node Name=gpu File=$S/gpu[0-1]" > "$S/gres.conf"
else
  echo "mknod is not allowed here: the cluster has no GPU gres"
fi
cat > "$S/slurm.conf" <<CONF
ClusterName=tftest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
$gres_conf
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) $node_gres State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$S/slurm.conf
slurmctld -D -f "$SLURM_CONF" > "$S/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" -N "$node" > "$S/slurmd.out" 2>&1 &
slurmd_pid=$!
stop_slurm() {
  scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null
  wait_for 10 test -z "$(squeue -h 2>/dev/null)"
  kill "$slurmd_pid" "$ctld_pid" 2>/dev/null
  wait "$slurmd_pid" "$ctld_pid" 2>/dev/null
  [ -n "${TF_KEEP_WORK:-}" ] && { echo "kept $S"; return; }
  rm -rf "$S"
}
# Every job: no requeue after a failure, and a bound on the wait.
SBATCH_BIN=$(command -v sbatch)
sbatch() { timeout 120 "$SBATCH_BIN" --no-requeue "$@"; }
trap 'stop_slurm; cleanup' EXIT
wait_for 30 sh -c "sinfo -h -o %t | grep -qx idle" ||
  { fail "the node never became idle: $(sinfo 2>&1; tail -5 "$S/slurmctld.log" "$S/slurmd.log")"; finish; }
echo "slurm: node $node idle ($(sinfo -h -o '%c CPUs, gres %G'))"

# The binaries, as a user's TUNEFLEET_BIN_DIR; the job inherits this environment (sbatch
# --export=ALL) and runs in the folder it was submitted from.
mkdir -p "$WORK/bin"
ln -s "$HEAD" "$WORK/bin/head"; ln -s "$AGENT" "$WORK/bin/agent"
ln -s "$HPO" "$WORK/bin/hpo"; ln -s "$TRAINER" "$WORK/bin/trainer"
export TUNEFLEET_BIN_DIR=$WORK/bin
cp configs/synthetic.yaml "$WORK/synthetic.yaml"
cd "$WORK" || exit 1
# job_ended JOB: no job and no job step left, and no agent of this test.
nothing_left() {
  [ -z "$(squeue -h 2>/dev/null)" ] && [ -z "$(squeue -s -h 2>/dev/null)" ] &&
    [ -z "$(pgrep -f "$XDG_RUNTIME_DIR" 2>/dev/null)" ]
}
# Each job's stdout and stderr, for a failed check.
show() { echo "---- $1"; cat "$1"; echo "----"; }

# 1. Outside an allocation.
rc=0
env -u SLURM_JOB_ID -u SLURM_JOBID "$HEAD" --start_agents slurm > "$WORK/outside.out" 2>&1 || rc=$?
echo "outside an allocation: exit $rc: $(cat "$WORK/outside.out")"
[ "$rc" -eq 2 ] && [ "$(wc -l < "$WORK/outside.out")" -eq 1 ] &&
  grep -q '^head: error: --start_agents slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set)' "$WORK/outside.out" ||
  fail "outside an allocation: $(cat "$WORK/outside.out")"

# 2. A whole sweep in one job.
gres_args=()
[ -n "$node_gres" ] && gres_args=(--gres=gpu:2)
start=$(date +%s)
rc=0
sbatch --wait "${gres_args[@]}" -o "$WORK/sweep.out" "$SBATCH_SCRIPT" synthetic.yaml \
  --journal runs/sweep/journal.log > /dev/null || rc=$?
echo "sweep job: exit $rc after $(( $(date +%s) - start )) s"
grep -E 'slurm job|host .*(slots|agent up)|registered with|best trial|hpo sweep exited' "$WORK/sweep.out" | cut -c1-200
[ "$rc" -eq 0 ] || { fail "the sweep job failed (exit $rc)"; show "$WORK/sweep.out"; }
if [ -n "$node_gres" ]; then
  grep -q "slurm job [0-9]*: 1 node(s), 2 GPU(s) each (SLURM_GPUS_ON_NODE=2)" "$WORK/sweep.out" ||
    fail "the head did not read 2 GPUs a node from the allocation"
  grep -q "agent $node registered with 2 slot(s)" "$WORK/sweep.out" || fail "the agent did not offer 2 slots"
fi
grep -q "host $node: agent up (registered" "$WORK/sweep.out" || fail "no 'host $node: agent up' line"
grep -q "starting the agents of 1 host(s) as one Slurm job step: exec srun .*--overlap" "$WORK/sweep.out" ||
  fail "the agents were not started as one srun step"
done_points=$(pyq runs/sweep/journal.log "sum(t['state'] in ('COMPLETE', 'PRUNED') for t in T)")
[ "$done_points" = 14 ] || fail "$done_points of the 14 points finished"
wait_for 10 nothing_left || fail "left after the sweep: $(squeue -h; squeue -s -h; pgrep -af "$XDG_RUNTIME_DIR")"

# 3. An agent that cannot start: the head says so for its host.
rc=0
sbatch --wait -o "$WORK/noagent.out" --wrap "timeout -s TERM 8 $HEAD --start_agents slurm --agent $WORK/no-such-agent --log_dir $WORK/noagent" > /dev/null || rc=$?
line=$(grep "host $node: " "$WORK/noagent.out" | tail -1)
echo "no agent binary: $line"
echo "$line" | grep -qE "host $node: the Slurm job step of the agents ended \(exit code 127\) before an agent registered: .*no-such-agent.*not found" ||
  { fail "no line saying why host $node has no agent"; show "$WORK/noagent.out"; }
wait_for 10 nothing_left || fail "left after the failed start: $(squeue -s -h)"

# 4. Host filters.
filter_job() {  # filter_job NAME ARGS PATTERN: the job fails and says PATTERN
  local rc=0
  TUNEFLEET_HEAD_ARGS=$2 sbatch --wait "${gres_args[@]}" -o "$WORK/$1.out" "$SBATCH_SCRIPT" synthetic.yaml \
    --journal "runs/$1/journal.log" > /dev/null || rc=$?
  echo "$1 ($2): exit $rc: $(grep -E "$3" "$WORK/$1.out" | head -1)"
  [ "$rc" -ne 0 ] && grep -qE "$3" "$WORK/$1.out" || { fail "$1: no /$3/"; show "$WORK/$1.out"; }
}
if [ -n "$node_gres" ]; then
  filter_job include_gpu "--include $node:7" "^head: error: --include: host $node has slots=2 \(GPUs 0-1\): no GPU 7$"
fi
filter_job exclude_all "--exclude $node" "^head: error: --exclude leaves no host of the Slurm allocation$"
wait_for 10 nothing_left || fail "left after the filters: $(squeue -s -h)"

# 5. The head killed inside its job: the agents' job step ends with it.
cat > "$WORK/kill.sh" <<KILL
#!/bin/bash
$HEAD --start_agents slurm --agent $AGENT --log_dir $WORK/kill > $WORK/kill.head 2>&1 &
h=\$!
for i in \$(seq 100); do grep -q 'agent up' $WORK/kill.head && break; sleep 0.1; done
squeue -s -h -j \$SLURM_JOB_ID -o %i > $WORK/kill.steps_before
kill -9 \$h
for i in \$(seq 100); do [ "\$(squeue -s -h -j \$SLURM_JOB_ID -o %i | grep -vc batch)" -eq 0 ] && break; sleep 0.1; done
squeue -s -h -j \$SLURM_JOB_ID -o %i > $WORK/kill.steps_after
KILL
sbatch --wait -o "$WORK/kill.out" "$WORK/kill.sh" > /dev/null || fail "the kill job failed: $(cat "$WORK/kill.out")"
echo "head killed: steps before: $(tr '\n' ' ' < "$WORK/kill.steps_before"); after: $(tr '\n' ' ' < "$WORK/kill.steps_after")"
grep -q '\.0$' "$WORK/kill.steps_before" || fail "no agent step ran: $(cat "$WORK/kill.head")"
grep -q '\.0$' "$WORK/kill.steps_after" && fail "the agents' job step outlived the head"
wait_for 10 nothing_left || fail "left after the killed head: $(squeue -s -h; pgrep -af "$XDG_RUNTIME_DIR")"
finish
