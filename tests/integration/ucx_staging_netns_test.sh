#!/usr/bin/env bash
# UCX staging between hosts (issue 6, acceptance 5): two network namespaces made here
# (tests/integration/netns_lib.sh), joined by veth pairs through a bridge. `bulk serve` in one
# publishes a 50 MiB random file; `bulk fetch` in the other pulls it over the veth address into
# a cache (UCX picks tcp: there is no RDMA device), the SHA-256 matches sha256sum, and a second
# fetch, as a second trial would make, reuses the entry with 0 bytes transferred and without
# contacting the server. Prints the transport and MB/s of three fresh fetches. Also: an unknown
# hash and a closed port are one-line errors. Needs root (CI runs as root).
# Issue 32: the server serves only fetches that present its token (--token_file, written 0600
# by `bulk serve`): a fetch with another token is refused in one line.
# Args: bulk binary.
BULK=$1
source tests/integration/lib.sh
source tests/integration/netns_lib.sh
make_cluster 2
A=${NS_HOSTS[0]} B=${NS_HOSTS[1]}
echo "server host $A ($NET.2), client host $B ($NET.3)"

head -c 50M /dev/urandom > "$WORK/dataset.bin"
want=$(sha256sum "$WORK/dataset.bin" | cut -d' ' -f1)

ip netns exec "$A" "$BULK" serve --bind "$NET.2" --token_file "$WORK/token" "$WORK/dataset.bin" \
  > "$WORK/serve.out" 2> "$WORK/serve.err" &
serve_pid=$!
wait_for 20 grep -q "^listening " "$WORK/serve.out" ||
  { fail "bulk serve did not start: $(tail -3 "$WORK/serve.err")"; finish; }
addr=$(awk '/^listening /{print $2}' "$WORK/serve.out")
hash=$(awk '/^serving /{print $2}' "$WORK/serve.out")
echo "bulk serve: $(head -1 "$WORK/serve.out"); listening $addr"
[ "$hash" = "$want" ] || fail "published hash $hash, sha256sum says $want"
[ "$(stat -c %a "$WORK/token")" = 600 ] || fail "the token file is not 0600"
case "$addr" in "$NET.2:"*) ;; *) fail "listening on $addr, not on $NET.2" ;; esac

# 1. Fresh fetches across the namespaces (the first with UCX's log, to show the transport).
rates=()
for i in 1 2 3; do
  log_level=error
  [ "$i" -eq 1 ] && log_level=info
  ip netns exec "$B" env UCX_LOG_LEVEL=$log_level "$BULK" fetch --from "$addr" --hash "$hash" \
    --token_file "$WORK/token" --cache "$WORK/cache$i" > "$WORK/fetch$i.out" 2> "$WORK/fetch$i.err" ||
    { fail "fetch $i failed: $(tail -2 "$WORK/fetch$i.err")"; finish; }
  line=$(cat "$WORK/fetch$i.out")
  echo "fetch $i: $line"
  [[ "$line" =~ ^fetched\ 52428800\ bytes\ in\ [0-9.]+\ s,\ ([0-9.]+)\ MB/s ]] ||
    fail "fetch $i printed: $line"
  rates+=("${BASH_REMATCH[1]:-0}")
  got=$(sha256sum "$WORK/cache$i/$hash" | cut -d' ' -f1)
  [ "$got" = "$want" ] || fail "fetch $i: cache entry hashes to $got, not $want"
  [ "$(ls -A "$WORK/cache$i")" = "$hash" ] || fail "fetch $i left more than the entry: $(ls -A "$WORK/cache$i")"
done
lanes=$(grep -o "am([^)]*)" "$WORK/fetch1.err" | sort -u | tr '\n' ' ')
echo "UCX lanes of the client: ${lanes:-unknown}"
echo "$lanes" | grep -q "tcp/" || fail "UCX did not use tcp over the veth: $lanes"
median=$(printf '%s\n' "${rates[@]}" | sort -g | sed -n 2p)
echo "50 MiB between namespaces: ${rates[*]} MB/s (median $median MB/s)"

# 2. The second trial on that host: reused, nothing transferred, the server not asked.
sent_before=$(grep -c "] sent " "$WORK/serve.err")
ip netns exec "$B" "$BULK" fetch --from "$addr" --hash "$hash" --token_file "$WORK/token" --cache "$WORK/cache1" \
  > "$WORK/reuse.out" 2> "$WORK/reuse.err" || fail "second fetch failed: $(tail -2 "$WORK/reuse.err")"
echo "second fetch: $(cat "$WORK/reuse.out")"
grep -qE "^reused 0 bytes, verified in [0-9.]+ s: $WORK/cache1/$hash$" "$WORK/reuse.out" ||
  fail "the second fetch was not a reuse"
sleep 0.2
[ "$(grep -c "] sent " "$WORK/serve.err")" -eq "$sent_before" ] || fail "the reuse contacted the server"

# 3. Errors: an unknown hash, a port nobody listens on.
other=$(echo other | sha256sum | cut -d' ' -f1)
ip netns exec "$B" "$BULK" fetch --from "$addr" --hash "$other" --token_file "$WORK/token" --cache "$WORK/cache1" \
  > /dev/null 2> "$WORK/unknown.err" && fail "an unknown hash was fetched"
grep -qx "bulk fetch: error: bulk server $addr has no content $other: unknown hash" \
  "$WORK/unknown.err" || fail "unknown hash: $(cat "$WORK/unknown.err")"
ip netns exec "$B" "$BULK" fetch --from "$NET.2:1" --hash "$hash" --token_file "$WORK/token" --cache "$WORK/cache9" \
  > /dev/null 2> "$WORK/refused.err" && fail "a closed port answered"
grep -qx "bulk fetch: error: cannot reach bulk server $NET.2:1: Connection refused" \
  "$WORK/refused.err" || fail "closed port: $(cat "$WORK/refused.err")"
[ -z "$(ls -A "$WORK/cache9" 2>/dev/null)" ] || fail "a failed fetch left files: $(ls -A "$WORK/cache9")"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/wrong-token"; echo >> "$WORK/wrong-token"
chmod 600 "$WORK/wrong-token"
ip netns exec "$B" "$BULK" fetch --from "$addr" --hash "$hash" --token_file "$WORK/wrong-token" \
  --cache "$WORK/cache8" > /dev/null 2> "$WORK/wrong.err" && fail "a wrong token fetched"
grep -qx "bulk fetch: error: bulk server $addr refused the fetch: missing or wrong token.*" \
  "$WORK/wrong.err" && [ "$(wc -l < "$WORK/wrong.err")" -eq 1 ] || fail "wrong token: $(cat "$WORK/wrong.err")"
echo "wrong token: $(cat "$WORK/wrong.err")"
[ -z "$(ls -A "$WORK/cache8" 2>/dev/null)" ] || fail "a refused fetch left files"

# 4. SIGTERM stops the server cleanly.
kill -TERM "$serve_pid"
wait "$serve_pid"; rc=$?
[ "$rc" -eq 0 ] || fail "bulk serve exited $rc: $(tail -2 "$WORK/serve.err")"
grep -q "stopping: 3 transfer(s) completed" "$WORK/serve.err" ||
  fail "server stats: $(grep stopping "$WORK/serve.err")"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
