#!/usr/bin/env bash
# `head --start_agents pdsh` with Debian's pdsh, its exec module standing in for ssh
# (PDSH_RCMD_TYPE=exec: pdsh runs each host's command here, with %h its host's name):
#  1. the head starts the agents of two hosts (pa, pb, 2 slots each) as one
#     `pdsh -S -f 1024 -w pa,pb AGENT ... --name %h --detach --slots 2`; each agent's parent is
#     pdsh (a wrapper --agent records it; Debian's pdsh runs as pdsh.bin), and each registers
#     under its host's name; `agents: all 2 host(s) up`;
#  2. a synthetic sweep through that head runs its trials on both hosts;
#  3. SIGTERM to the head shuts its agents down: none is left;
#  4. an agent binary that is not there: the head says why for each host, from pdsh's output.
# Needs pdsh (scripts/setup.sh --tests installs it). Args: head, agent, hpo, trainer.
HEAD=$(realpath "$1") AGENT=$(realpath "$2") HPO=$(realpath "$3") TRAINER=$(realpath "$4")
source tests/integration/lib.sh
command -v pdsh > /dev/null || { fail "no pdsh: scripts/setup.sh --tests installs it"; finish; }
# The agents find their trainer here; hpo talks to the head only.
mkdir -p "$WORK/bin" "$WORK/wrap"
ln -s "$AGENT" "$WORK/bin/agent"; ln -s "$TRAINER" "$WORK/bin/trainer"
export TUNEFLEET_BIN_DIR=$WORK/bin
# The --agent the head starts: notes its parent process and its arguments, then is the agent.
cat > "$WORK/wrap/agent" <<WRAP
#!/bin/sh
echo "parent=\$(cat /proc/\$PPID/comm) \$*" >> "$WORK/parents"
exec "$AGENT" "\$@"
WRAP
chmod +x "$WORK/wrap/agent"
printf 'pa slots=2\npb slots=2\n' > "$WORK/hosts.txt"
# The agents of this test: their --head is the test's private socket.
agents() { pgrep -f -- "--head ipc://$XDG_RUNTIME_DIR/" 2>/dev/null; }
no_agents() { [ -z "$(agents)" ]; }
end_agents() { for pid in $(agents); do kill -9 "$pid" 2>/dev/null; done; }
trap 'end_agents; cleanup' EXIT
export PDSH_RCMD_TYPE=exec

# 1. The agents, started through pdsh.
"$HEAD" --nodes "$WORK/hosts.txt" --start_agents pdsh --agent "$WORK/wrap/agent" \
  --endpoint_file "$WORK/endpoint" --log_dir "$WORK/headlogs" > "$WORK/head.log" 2>&1 &
head_pid=$!
wait_for 20 grep -q "agents: all 2 host(s) up" "$WORK/head.log" ||
  { fail "the agents did not come up: $(tail -5 "$WORK/head.log"; cat "$WORK/headlogs/agents/pdsh.log" 2>/dev/null)"; finish; }
grep -o "starting the agents of 2 host(s) through pdsh: .*" "$WORK/head.log" | cut -c1-200
grep -q "starting the agents of 2 host(s) through pdsh: PDSH_RCMD_TYPE=exec exec pdsh -S -f 1024 -w pa,pb .*/wrap/agent --head ipc://.* --name %h --detach --slots 2$" "$WORK/head.log" ||
  fail "the head did not start the agents as one pdsh: $(grep starting "$WORK/head.log")"
cat "$WORK/parents"
for h in pa pb; do
  grep -q "host $h: agent up (registered" "$WORK/head.log" || fail "no 'host $h: agent up' line"
  grep -q "agent $h registered with 2 slot(s)" "$WORK/head.log" || fail "agent $h did not offer 2 slots"
  grep -qE "^parent=pdsh(\.bin)? --head ipc://.* --name $h --detach --slots 2$" "$WORK/parents" ||
    fail "agent $h was not started by pdsh (%h substituted): $(cat "$WORK/parents")"
done
[ "$(wc -l < "$WORK/parents")" -eq 2 ] || fail "$(wc -l < "$WORK/parents") agent starts, want 2"

# 2. A sweep through the head: 4 trials at once over the 2 x 2 slots.
synthetic_sweep "$WORK/journal.log" 4 4 0.05
"$HPO" sweep "${args[@]}" --head "$(cat "$WORK/endpoint")" > "$WORK/hpo.log" 2>&1
rc=$?
tail -2 "$WORK/hpo.log"
[ "$rc" -eq 0 ] || fail "hpo sweep exited $rc: $(tail -5 "$WORK/hpo.log")"
[ "$(count_state "$WORK/journal.log" COMPLETE)" = 4 ] ||
  fail "$(count_state "$WORK/journal.log" COMPLETE) of 4 trials completed"
for h in pa pb; do
  grep -q "placed on $h" "$WORK/head.log" || fail "no trial ran on $h: $(grep 'placed on' "$WORK/head.log")"
done

# 3. The head's SIGTERM ends its agents.
kill -TERM "$head_pid"; wait "$head_pid"; rc=$?
[ "$rc" -eq 0 ] || fail "the head exited $rc"
wait_for 10 no_agents || fail "agents left after the head: $(agents)"

# 4. No agent binary: each host's failure, from pdsh's output.
"$HEAD" --nodes "$WORK/hosts.txt" --start_agents pdsh --agent "$WORK/no-such-agent" \
  --log_dir "$WORK/headlogs2" > "$WORK/head2.log" 2>&1 &
head_pid=$!
wait_for 20 grep -q "agents: 0 of 2 host(s) up" "$WORK/head2.log" ||
  fail "the head did not report the hosts failed: $(tail -5 "$WORK/head2.log")"
kill -TERM "$head_pid"; wait "$head_pid"
for h in pa pb; do
  line=$(grep "host $h: pdsh ended" "$WORK/head2.log")
  echo "${line#*] }"
  echo "$line" | grep -qE "host $h: pdsh ended \(exit code [0-9]+\) before an agent registered: .*no-such-agent.*No such file or directory" ||
    fail "no line saying why host $h has no agent: $(grep "host $h" "$WORK/head2.log")"
done
finish
