# Network namespaces for the cluster tests (sourced after lib.sh; needs root).
#   make_cluster N: a "head" namespace $NS_HEAD with a bridge at $NET.1 and N host namespaces
#   ${NS_HOSTS[0..N-1]} at $NET.2 ... joined to it by veth pairs. cleanup_cluster removes them
#   (and kills any agent named after them); it runs on exit. make_cluster N SLOTS also writes the
#   head's hosts file (write_hosts SLOTS).
NS_HEAD=tfh$$
NS_HOSTS=()
NET=10.213.$((RANDOM % 250 + 1))
cleanup_cluster() {
  [ -n "${head_pid:-}" ] && kill -9 "$head_pid" 2>/dev/null
  for ns in "${NS_HOSTS[@]}"; do
    for p in $(pgrep -f -- "[-]-name $ns( |$)" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  done
  for ns in "$NS_HEAD" "${NS_HOSTS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  # The agents' runtime folders (logs, locks, caches) lie in $RUNTIME, under $WORK.
  cleanup
}
trap cleanup_cluster EXIT
make_cluster() {
  [ "$(id -u)" -eq 0 ] || { fail "needs root to make network namespaces"; finish; }
  ip netns add "$NS_HEAD" && ip -n "$NS_HEAD" link add br0 type bridge &&
    ip -n "$NS_HEAD" addr add "$NET.1/24" dev br0 && ip -n "$NS_HEAD" link set br0 up &&
    ip -n "$NS_HEAD" link set lo up || { fail "cannot make the head namespace"; finish; }
  local i ns
  for ((i = 0; i < $1; i++)); do
    ns=tf$((i + 1))h$$
    NS_HOSTS+=("$ns")
    ip netns add "$ns" && ip link add "vh$i-$$" type veth peer name "vx$i-$$" &&
      ip link set "vh$i-$$" netns "$NS_HEAD" && ip link set "vx$i-$$" netns "$ns" &&
      ip -n "$NS_HEAD" link set "vh$i-$$" master br0 up &&
      ip -n "$ns" addr add "$NET.$((i + 2))/24" dev "vx$i-$$" && ip -n "$ns" link set "vx$i-$$" up &&
      ip -n "$ns" link set lo up || { fail "cannot wire $ns"; finish; }
  done
  [ -z "${2:-}" ] || write_hosts "$2"
}
# write_hosts SLOTS [LINE...]: $WORK/hosts.txt, the head's --nodes file: each host namespace with
# SLOTS slots, then each LINE as it is.
write_hosts() {
  local slots=$1; shift
  { printf "%s slots=$slots\n" "${NS_HOSTS[@]}"; [ "$#" -eq 0 ] || printf '%s\n' "$@"; } > "$WORK/hosts.txt"
}
# agent_pid HOST: the pid of the agent process named HOST.
agent_pid() { pgrep -f -- "^[^ ]*/agent --head .*--name $1( |$)" | head -1; }
# agents_gone HOST...: no agent named after any HOST runs.
agents_gone() {
  local h
  for h in "$@"; do [ -z "$(agent_pid "$h")" ] || return 1; done
}
# REMOTE_SHELL: how the head reaches a host (its --remote_shell); a test may set another before
# start_head.
REMOTE_SHELL="ip netns exec {host}"
# start_head LOG BIND [FLAG...]: starts $HEAD in the head namespace, bound to BIND, on the hosts of
# $WORK/hosts.txt (--insecure, --remote_shell "$REMOTE_SHELL", logs under $WORK/headlogs) with the
# FLAGs; its output goes to LOG; head_pid is its pid (cleanup_cluster kills it).
start_head() {
  local log=$1 bind=$2; shift 2
  ip netns exec "$NS_HEAD" "$HEAD" --nodes "$WORK/hosts.txt" --bind "$bind" --insecure \
    --remote_shell "$REMOTE_SHELL" "$@" --log_dir "$WORK/headlogs" > "$log" 2>&1 &
  head_pid=$!
}
# wait_hosts_up LOG COUNT [WHAT]: waits up to 20 s for the head's line "agents: COUNT host(s) up"
# in LOG (COUNT as "all 2" or "2 of 3"); without it the test ends: "the WHAT did not come up"
# (WHAT: agents unless given) with the log's last lines.
wait_hosts_up() {
  wait_for 20 grep -q "agents: $2 host(s) up" "$1" ||
    { fail "the ${3:-agents} did not come up: $(tail -5 "$1")"; finish; }
}
# stop_head: SIGTERM to the head (it shuts its agents down) and waits for it; returns its exit code.
stop_head() {
  kill -TERM "$head_pid"; wait "$head_pid"
  local rc=$?; head_pid=; return "$rc"
}
# make_host_pair: two host namespaces ${NS_HOSTS[0..1]} joined directly by a veth pair, each end
# named tfnet0 inside its namespace, at $NET.1 and $NET.2 (no head namespace, no bridge).
make_host_pair() {
  [ "$(id -u)" -eq 0 ] || { fail "needs root to make network namespaces"; finish; }
  NS_HOSTS=(tf1p$$ tf2p$$)
  ip netns add "${NS_HOSTS[0]}" && ip netns add "${NS_HOSTS[1]}" &&
    ip link add "tfp$$a" type veth peer name "tfp$$b" || { fail "cannot make the namespaces"; finish; }
  local i end
  for i in 0 1; do
    end=tfp$$$([ "$i" -eq 0 ] && echo a || echo b)
    ip link set "$end" netns "${NS_HOSTS[$i]}" &&
      ip -n "${NS_HOSTS[$i]}" link set "$end" name tfnet0 &&
      ip -n "${NS_HOSTS[$i]}" addr add "$NET.$((i + 1))/24" dev tfnet0 &&
      ip -n "${NS_HOSTS[$i]}" link set tfnet0 up && ip -n "${NS_HOSTS[$i]}" link set lo up ||
      { fail "cannot wire ${NS_HOSTS[$i]}"; finish; }
  done
}
