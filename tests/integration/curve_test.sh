#!/usr/bin/env bash
# The control plane under CURVE (issue 6, acceptance 3): `head --gen_keys` writes the key folder
# (secret files 0600, never overwritten); a head that binds a non-loopback address without keys
# is refused unless --insecure; with `--keys` the head accepts an agent and an hpo holding the
# listed client key — a sweep runs — and refuses a client key not in authorized_keys (the agent
# never registers, hpo never gets an answer and says why) and a client without keys.
# Issue 32: key folders as ssh's StrictModes wants them: a secret key open to others, a key
# folder or an authorized_keys writable by others, and `--gen_keys FILE` are each one line and
# exit 2 from head, agent and hpo.
# Issue 32, staging: the sweep stages a file (resources.stage); the head's UCX staging server
# listens on 127.0.0.1 only, as the head does (no socket of the head's on another address), the
# agent fetches with the head's token (learnt in its Assign, over CURVE), and another local user,
# made here, who knows the port and the hash is refused by `bulk fetch` (no token), in one line.
# Args: head, agent, hpo, bulk binaries.
HEAD=$1 AGENT=$2 HPO=$3 BULK=$4
source tests/integration/lib.sh
K=$WORK/keys R=$WORK/rogue
"$HEAD" --gen_keys "$K" > "$WORK/gen.out" 2>&1 || { fail "gen_keys: $(cat "$WORK/gen.out")"; finish; }
for f in server.key server.pub client.key authorized_keys; do [ -s "$K/$f" ] || fail "no $K/$f"; done
[ "$(stat -c %a "$K/server.key")" = 600 ] && [ "$(stat -c %a "$K/client.key")" = 600 ] ||
  fail "secret key files are not 0600"
"$HEAD" --gen_keys "$K" > /dev/null 2> "$WORK/again.err" && fail "gen_keys overwrote a folder"
grep -q "not overwriting" "$WORK/again.err" || fail "gen_keys twice: $(cat "$WORK/again.err")"
"$HEAD" --gen_keys "$WORK/other" > /dev/null 2>&1 || fail "second key folder"
mkdir -p "$R" && cp "$K/server.pub" "$R/" && cp "$WORK/other/client.key" "$R/"

# usage_line WHAT PATTERN CMD...: exit 2 and one line on stderr that matches PATTERN.
usage_line() {
  local what=$1 pattern=$2; shift 2
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] && printf '%s' "$err" | grep -q -- "$pattern" ||
    fail "$what: exit $rc, expected 2 and one line with '$pattern': $err"
  echo "$what: exit $rc: ${err//$WORK\//}"
}
touch "$WORK/a-file"
usage_line "gen_keys FILE" "a-file is not a folder" "$HEAD" --gen_keys "$WORK/a-file"
P=$WORK/perm
"$HEAD" --gen_keys "$P" > /dev/null 2>&1 || fail "gen_keys $P"
[ "$(stat -c %a "$P")" = 700 ] || fail "the key folder is not 0700: $(stat -c %a "$P")"
HEAD_ARGS=(--keys "$P" --bind tcp://127.0.0.1:0 --start_agents none)
chmod 644 "$P/server.key"
usage_line "head, server.key 0644" "mode 0644.*run chmod 600 $P/server.key" "$HEAD" "${HEAD_ARGS[@]}"
chmod 600 "$P/server.key"; chmod 640 "$P/client.key"
usage_line "agent, client.key 0640" "mode 0640.*run chmod 600 $P/client.key" \
  "$AGENT" --head tcp://127.0.0.1:9 --keys "$P" --name perm
usage_line "hpo, client.key 0640" "mode 0640.*run chmod 600 $P/client.key" \
  "$HPO" sweep "$WORK/unread.yaml" --head tcp://127.0.0.1:9 --keys "$P"
chmod 600 "$P/client.key"; chmod 777 "$P"
usage_line "head, key folder 0777" "mode 0777.*run chmod 700 $P" "$HEAD" "${HEAD_ARGS[@]}"
usage_line "agent, key folder 0777" "mode 0777.*run chmod 700 $P" \
  "$AGENT" --head tcp://127.0.0.1:9 --keys "$P" --name perm
chmod 700 "$P"; chmod 666 "$P/authorized_keys"
usage_line "head, authorized_keys 0666" "mode 0666.*run chmod go-w $P/authorized_keys" \
  "$HEAD" "${HEAD_ARGS[@]}"

"$HEAD" --bind tcp://0.0.0.0:0 > /dev/null 2> "$WORK/open.err"; rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--keys" "$WORK/open.err" || fail "open bind without keys: exit $rc $(cat "$WORK/open.err")"

"$HEAD" --keys "$K" --bind tcp://127.0.0.1:0 --endpoint_file "$WORK/ep" --start_agents none \
  > "$WORK/head.log" 2>&1 &
head_pid=$!
wait_for 10 test -s "$WORK/ep" || { fail "the head did not start: $(cat "$WORK/head.log")"; finish; }
EP=$(cat "$WORK/ep")
grep -q "CURVE on: 1 authorized client key" "$WORK/head.log" || fail "head: $(head -3 "$WORK/head.log")"
head -c 3000000 /dev/urandom > "$WORK/staged.bin"
STAGED_SUM=$(sha256sum "$WORK/staged.bin" | cut -d' ' -f1)
write_sweep_yaml "$WORK/sweep.yaml" name=curve \
  trainer='{synthetic: {steps: 3, seconds_per_step: 0.0, noise: 0.0, seed: 0}}' \
  resources="{gpus_per_trial: 1, stage: [$WORK/staged.bin]}" parameters.lr='{distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}' \
  parameters.batch_size='{values: [32]}' search='{method: random, random: {trials: 3, seed: 0}}' \
  max_concurrent_trials=2
# A client with an unlisted key, started first: it must give up (30 s) and say why.
"$HPO" sweep "$WORK/sweep.yaml" --head "$EP" --keys "$R" --journal "$WORK/rogue/journal.log" \
  > /dev/null 2> "$WORK/rogue_hpo.err" &
rogue_hpo=$!
"$AGENT" --head "$EP" --keys "$K" --name good --slots 2 > "$WORK/good.log" 2>&1 &
"$AGENT" --head "$EP" --keys "$R" --name rogue --slots 2 > "$WORK/rogue.log" 2>&1 &
rogue_agent=$!
"$AGENT" --head "$EP" --name nokeys --slots 2 > "$WORK/nokeys.log" 2>&1 &
nokeys_agent=$!
wait_for 10 grep -q "agent good registered" "$WORK/head.log" || fail "the keyed agent did not register"
wait_for 10 grep -q "not in authorized_keys" "$WORK/head.log" || fail "the rogue key was not refused"
grep "not in authorized_keys" "$WORK/head.log" | head -1 | cut -d']' -f2
"$HPO" sweep "$WORK/sweep.yaml" --head "$EP" --keys "$K" > "$WORK/hpo.out" 2>&1 ||
  fail "sweep with keys: $(tail -3 "$WORK/hpo.out")"
tail -2 "$WORK/hpo.out"
[ "$(count_state "$WORK/run/journal.log" COMPLETE)" -eq 3 ] || fail "not 3 trials"
grep -qE "agent (rogue|nokeys) registered" "$WORK/head.log" && fail "an agent without a listed key registered"
rc=0; wait "$rogue_hpo" || rc=$?
echo "rogue hpo: exit $rc: $(tail -1 "$WORK/rogue_hpo.err")"
[ "$rc" -ne 0 ] && grep -q "authorized_keys" "$WORK/rogue_hpo.err" || fail "the rogue hpo: $(cat "$WORK/rogue_hpo.err")"
[ "$(pyq "$WORK/run/journal.log" 'len(T)')" -eq 3 ] || fail "the rogue client added trials"

# Staging: where the server listens, who may fetch.
STAGE=$(grep -o "staging server (UCX) listening on [0-9.:]*" "$WORK/head.log" | awk '{print $NF}')
echo "staging server: $STAGE"
case "$STAGE" in 127.0.0.1:*) ;; *) fail "the staging server listens on '$STAGE', not 127.0.0.1" ;; esac
grep -q "staged $WORK/staged.bin (${STAGED_SUM:0:12}) fetched from $STAGE: 3000000 bytes" "$WORK/good.log" ||
  fail "the agent did not fetch the staged file: $(grep staged "$WORK/good.log" | head -3)"
listening=$(ss -ltnpH | grep "pid=$head_pid," | awk '{print $4}' | sort -u | tr '\n' ' ')
echo "the head listens on: $listening"
[ -n "$listening" ] || fail "no listening socket of the head found"
for a in $listening; do
  case "$a" in 127.0.0.1:*) ;; *) fail "the head (--bind tcp://127.0.0.1) listens on $a" ;; esac
done
if ! command -v useradd > /dev/null || [ "$(id -u)" -ne 0 ]; then
  fail "the second-user fetch needs root and useradd (CI runs as root; other_user_test likewise)"
else
  U=tf-probe-$$
  PROBE=$(mktemp -d /tmp/tf-probe-XXXXXX)
  trap 'cleanup; userdel "$U" 2>/dev/null; rm -rf "$PROBE"' EXIT
  useradd -M -r -s /usr/sbin/nologin "$U" || fail "cannot create user $U"
  cp "$BULK" "$PROBE/bulk" && chmod 755 "$PROBE" "$PROBE/bulk" && chown "$U" "$PROBE"
  # The other user knows port and hash (ss, the logs); its token can only be a guess.
  runuser -u "$U" -- sh -c "head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > $PROBE/token; chmod 600 $PROBE/token"
  err=$(runuser -u "$U" -- "$PROBE/bulk" fetch --from "$STAGE" --hash "$STAGED_SUM" \
          --token_file "$PROBE/token" --cache "$PROBE/cache" 2>&1 > /dev/null); rc=$?
  echo "another user's bulk fetch: exit $rc: $err"
  [ "$rc" -ne 0 ] || fail "another user fetched the staged file"
  [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] && printf '%s' "$err" | grep -q "refused the fetch: missing or wrong token" ||
    fail "another user's fetch was not refused for its token: $err"
  [ ! -e "$PROBE/cache/$STAGED_SUM" ] || fail "the staged file reached the other user's cache"
  grep -q "refusing bulk requests from 127.0.0.1 without the right token" "$WORK/head.log" ||
    fail "the head did not log the refusal"
fi
kill "$rogue_agent" "$nokeys_agent" 2>/dev/null
kill -TERM "$head_pid"; wait "$head_pid"
wait_for 10 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
