#!/usr/bin/env bash
# ucx_staging_bench: MB/s of `bulk fetch` (comm/bulk_fetch.h) between two network namespaces
# joined by a veth pair, i.e. two hosts without RDMA (UCX runs over tcp), each run into a fresh
# cache; against a plain TCP stream of the same file over the same veth (Python: sendfile on
# the server, recv_into + write on the client), runs alternating. Also the fixed cost of a
# fetch (UCX start, connect, request, teardown): `bulk fetch` of a 1-byte file.
# The bulk figure is what `bulk fetch` prints: bytes / (connect + transfer + write), without
# the SHA-256 verification it reports beside. Needs root (network namespaces).
# Usage: ucx_staging_bench [SIZE=50M] [RUNS=5]
set -euo pipefail
SIZE=${1:-50M}
RUNS=${2:-5}
# bulk: in the runfiles under `bazel run`, beside this script in a CMake build, or $BULK.
BULK=${BULK:-${RUNFILES_DIR:-$0.runfiles}/tunefleet/comm/bulk}
[ -x "$BULK" ] || BULK=$(dirname "$0")/bulk
[ "$(id -u)" -eq 0 ] || { echo "ucx_staging_bench: needs root (network namespaces)" >&2; exit 1; }
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3

work=$(mktemp -d /tmp/tf-ucxbench-XXXXXX)
S=tfbs$$ C=tfbc$$ NET=10.214.$((RANDOM % 250 + 1))
server_pid="" tcp_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$tcp_pid" ] && kill "$tcp_pid" 2>/dev/null || true
  ip netns del "$S" 2>/dev/null || true
  ip netns del "$C" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$S"
ip netns add "$C"
ip link add "vs$$" type veth peer name "vc$$"
ip link set "vs$$" netns "$S"
ip link set "vc$$" netns "$C"
ip -n "$S" addr add "$NET.1/24" dev "vs$$"
ip -n "$C" addr add "$NET.2/24" dev "vc$$"
for ns in "$S" "$C"; do ip -n "$ns" link set lo up; done
ip -n "$S" link set "vs$$" up
ip -n "$C" link set "vc$$" up

head -c "$SIZE" /dev/urandom > "$work/data.bin"
head -c 1 /dev/urandom > "$work/tiny.bin"
sync  # the new file's writeback would otherwise slow the first runs
bytes=$(stat -c %s "$work/data.bin")

ip netns exec "$S" "$BULK" serve --bind "$NET.1" --token_file "$work/token" "$work/data.bin" "$work/tiny.bin" \
  > "$work/serve.out" 2> "$work/serve.err" &
server_pid=$!
for _ in $(seq 100); do grep -q "^listening " "$work/serve.out" && break; sleep 0.1; done
addr=$(awk '/^listening /{print $2}' "$work/serve.out")
hash=$(awk '/^serving /{print $2; exit}' "$work/serve.out")
tiny=$(awk '/^serving /{h = $2} END {print h}' "$work/serve.out")
[ -n "$addr" ] || { cat "$work/serve.err"; echo "ucx_staging_bench: bulk serve failed" >&2; exit 1; }

cat > "$work/tcp_server.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 7799))
s.listen(8)
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "rb") as f:
        c.sendfile(f)
    c.close()
PY
cat > "$work/tcp_client.py" <<'PY'
import socket, sys, time
start = time.perf_counter()
c = socket.create_connection((sys.argv[1], 7799))
buf = bytearray(4 << 20)
view = memoryview(buf)
n = 0
with open(sys.argv[2], "wb") as f:
    while True:
        k = c.recv_into(buf)
        if not k:
            break
        f.write(view[:k])
        n += k
secs = time.perf_counter() - start
print("%.1f" % (n / 1e6 / secs))
PY
ip netns exec "$S" "$PY" "$work/tcp_server.py" "$NET.1" "$work/data.bin" &
tcp_pid=$!
sleep 0.5

bulk_rates=() tcp_rates=() fixed=()
for i in $(seq "$RUNS"); do
  line=$(ip netns exec "$C" "$BULK" fetch --from "$addr" --token_file "$work/token" --hash "$hash" --cache "$work/cache$i")
  [[ "$line" =~ ^fetched\ $bytes\ bytes\ in\ [0-9.]+\ s,\ ([0-9.]+)\ MB/s ]] ||
    { echo "ucx_staging_bench: bulk fetch printed: $line" >&2; exit 1; }
  bulk_rates+=("${BASH_REMATCH[1]}")
  rm -rf "$work/cache$i"
  tcp_rates+=("$(ip netns exec "$C" "$PY" "$work/tcp_client.py" "$NET.1" "$work/tcp.bin")")
  rm -f "$work/tcp.bin"
  line=$(ip netns exec "$C" "$BULK" fetch --from "$addr" --token_file "$work/token" --hash "$tiny" --cache "$work/tiny$i")
  [[ "$line" =~ ^fetched\ 1\ bytes\ in\ ([0-9.]+)\ s ]] ||
    { echo "ucx_staging_bench: bulk fetch printed: $line" >&2; exit 1; }
  fixed+=("${BASH_REMATCH[1]}")
  echo "run $i: bulk fetch ${bulk_rates[-1]} MB/s, plain TCP ${tcp_rates[-1]} MB/s, 1-byte fetch ${fixed[-1]} s"
done
summary() {  # NAME VALUE...: median (min .. max)
  local name=$1; shift
  printf '%s\n' "$@" | sort -g | awk -v name="$name" '{v[NR] = $1}
    END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
         printf "%s: median %s (%s .. %s)\n", name, m, v[1], v[NR]}'
}
echo "ucx_staging_bench: $bytes bytes between two network namespaces (veth), $RUNS runs"
summary "  bulk fetch MB/s" "${bulk_rates[@]}"
summary "  plain TCP MB/s " "${tcp_rates[@]}"
summary "  1-byte bulk fetch, s" "${fixed[@]}"
grep -o "am([^)]*)" <(ip netns exec "$C" env UCX_LOG_LEVEL=info "$BULK" fetch --from "$addr" \
  --token_file "$work/token" --hash "$tiny" --cache "$work/lanes" 2>&1) | sort -u | sed 's/^/  UCX lanes of the client: /'
