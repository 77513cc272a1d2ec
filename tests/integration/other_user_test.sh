#!/usr/bin/env bash
# Issue 17, acceptance 1: another user of the same host, made here (CI runs as root):
# 1. folders and links that user plants where root's runtime folder goes (a world-writable
#    parent, as /tmp is) are refused with one clear line, and no file outside is touched;
# 2. that user's `hpo sweep` against root's unkeyed head is refused at once, and root's head
#    refuses an unkeyed TCP bind (which every local user could reach);
# 3. as that user, a whole cluster (head, agent, and a bare client that submits a trial with
#    LD_PRELOAD, TUNEFLEET_BIN_DIR, CUDA_INJECTION64_PATH and NCCL_NET_PLUGIN in its env): none
#    reaches the trainer, NCCL_DEBUG and --allow_env names do, and a log folder outside what
#    the agent serves is refused.
# Args: head, agent, hpo, trainer binaries, submit_tool.
HEAD=$1 AGENT=$2 HPO=$3 TRAINER=$4 SUBMIT=$5
source tests/integration/lib.sh
[ "$(id -u)" -eq 0 ] || { fail "needs root to make a second user"; finish; }

U=tfu$$
useradd --system --no-create-home --shell /usr/sbin/nologin --user-group "$U" ||
  { fail "cannot create user $U"; finish; }
# The binaries where the other user can run them (root's cache is closed to it).
BIN=$(mktemp -d /tmp/tf-bin-XXXXXX)
chmod 755 "$BIN"
trap 'cleanup; userdel "$U" 2>/dev/null; rm -rf "$BIN"' EXIT
cp "$HEAD" "$AGENT" "$HPO" "$TRAINER" "$SUBMIT" "$BIN/" && chmod 755 "$BIN"/*
as_user() { setpriv --reuid="$U" --regid="$U" --init-groups -- "$@"; }
# one_line_refusal WHAT CMD...: exits non-zero with one line on stderr holding "refus".
one_line_refusal() {
  local what=$1; shift
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  [ "$rc" -ne 0 ] || { fail "$what: exit 0"; return; }
  [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || fail "$what: not one line: $err"
  echo "$what: exit $rc: $err"
}

# 1. Planted folders and links.
VICTIM=$WORK/root-only
echo secret > "$VICTIM"; chmod 600 "$VICTIM"
before=$(stat -c '%s %Y' "$VICTIM")
XA=$(mktemp -d /tmp/tf-xa-XXXXXX); chmod 1777 "$XA"   # like /tmp
as_user mkdir -m 777 "$XA/tunefleet" "$XA/tunefleet/agent-victim" "$XA/tunefleet/head"
as_user ln -s "$VICTIM" "$XA/tunefleet/agent-victim/agent.lock"
as_user ln -s "$VICTIM" "$XA/tunefleet/head/head.log"
one_line_refusal "agent in a planted folder" \
  env XDG_RUNTIME_DIR="$XA" "$AGENT" --name victim --head "ipc://$XA/none.sock"
one_line_refusal "head in a planted folder" env XDG_RUNTIME_DIR="$XA" "$HEAD" --start_agents none
one_line_refusal "dev mode in a planted folder" \
  env XDG_RUNTIME_DIR="$XA" "$HPO" sweep configs/synthetic.yaml --journal "$WORK/planted/j.log"
# The same folder made private but by the other user; and a link in place of the folder.
as_user mkdir -m 700 "$XA/theirs"
one_line_refusal "agent in the other user's folder" \
  "$AGENT" --name victim --head "ipc://$XA/none.sock" --runtime_dir "$XA/theirs"
as_user ln -s /etc "$XA/link"
one_line_refusal "agent in a linked folder" \
  "$AGENT" --name victim --head "ipc://$XA/none.sock" --runtime_dir "$XA/link"
[ "$(stat -c '%s %Y' "$VICTIM")" = "$before" ] && [ "$(cat "$VICTIM")" = secret ] ||
  fail "the file behind the planted link was touched"
rm -rf "$XA"

# 2. The other user against root's unkeyed head.
"$HEAD" --start_agents none --endpoint_file "$WORK/endpoint" > "$WORK/head.log" 2>&1 &
head_pid=$!
wait_for 10 test -s "$WORK/endpoint" || fail "root's head did not start: $(cat "$WORK/head.log")"
EP=$(cat "$WORK/endpoint")
case "$EP" in ipc://"$RUNTIME"/head/*) ;; *) fail "the head's default endpoint is $EP" ;; esac
start=$(date +%s%N)
one_line_refusal "the other user's sweep" \
  as_user "$BIN/hpo" sweep "$BIN/synthetic.yaml" --head "$EP" --journal /tmp/tf-nobody-$$.log
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$took" -lt 5000 ] || fail "the refusal took $took ms"
[ -e /tmp/tf-nobody-$$.log ] && fail "the other user's sweep wrote a journal"
as_user "$BIN/submit_tool" --head "$EP" --timeout_s 3 "synthetic" > "$WORK/rogue.out" 2>&1
grep -qx "welcome" "$WORK/rogue.out" && fail "the head welcomed another user's client"
kill -TERM "$head_pid"; wait "$head_pid"; head_pid=
one_line_refusal "an unkeyed TCP head" "$HEAD" --start_agents none --bind "tcp://127.0.0.1:0"
grep -q "every user of this host" <("$HEAD" --start_agents none --bind "tcp://127.0.0.1:0" 2>&1) ||
  fail "the unkeyed TCP refusal does not say why"

# 3. A cluster of the other user's: the trial's env through the agent.
UHOME=$(mktemp -d /tmp/tf-home-XXXXXX); chown "$U:$U" "$UHOME"; chmod 700 "$UHOME"
cat > "$BIN/fake_trainer" <<'SH'
#!/bin/sh
env > "$HOME/trainer.env"
exec "$(dirname "$0")/trainer" "$@"
SH
chmod 755 "$BIN/fake_trainer"
cp configs/synthetic.yaml "$BIN/synthetic.yaml"; chmod 644 "$BIN/synthetic.yaml"
ucmd() { as_user env -i HOME="$UHOME" PATH=/usr/bin:/bin "$@"; }
# In the background without a function (whose subshell would take the signals meant for them).
setpriv --reuid="$U" --regid="$U" --init-groups -- env -i HOME="$UHOME" PATH=/usr/bin:/bin \
  "$BIN/head" --start_agents none --endpoint_file "$UHOME/endpoint" > "$WORK/uhead.log" 2>&1 &
uhead=$!
wait_for 10 test -s "$UHOME/endpoint" || fail "the user's head did not start: $(cat "$WORK/uhead.log")"
UEP=$(cat "$UHOME/endpoint")
setpriv --reuid="$U" --regid="$U" --init-groups -- env -i HOME="$UHOME" PATH=/usr/bin:/bin \
  "$BIN/agent" --head "$UEP" --name u1 --trainer "$BIN/fake_trainer" --allow_env MY_FLAG \
  > "$WORK/uagent.log" 2>&1 &
uagent=$!
wait_for 10 grep -q "agent u1 registered" "$WORK/uhead.log" || fail "the user's agent did not register"
ucmd "$BIN/submit_tool" --head "$UEP" --log_dir "$UHOME/logs" \
  --env "LD_PRELOAD=/tmp/evil.so,LD_LIBRARY_PATH=/tmp,NCCL_DEBUG=WARN,MY_FLAG=1,OTHER=2,TUNEFLEET_BIN_DIR=/tmp/evil,CUDA_INJECTION64_PATH=/tmp/evil.so,NCCL_NET_PLUGIN=evil" \
  synthetic --steps 1 --seconds_per_step 0 > "$WORK/submit.out" 2>&1
grep -q "exit COMPLETED" "$WORK/submit.out" || fail "the trial did not complete: $(cat "$WORK/submit.out")"
ENVF=$UHOME/trainer.env
[ -s "$ENVF" ] || fail "the fake trainer wrote no environment"
grep -q "^LD_PRELOAD=" "$ENVF" && fail "LD_PRELOAD reached the trainer"
grep -q "^LD_LIBRARY_PATH=/tmp" "$ENVF" && fail "LD_LIBRARY_PATH reached the trainer"
grep -q "^OTHER=" "$ENVF" && fail "a variable nobody allowed reached the trainer"
for v in TUNEFLEET_BIN_DIR CUDA_INJECTION64_PATH NCCL_NET_PLUGIN; do
  grep -q "^$v=" "$ENVF" && fail "$v reached the trainer"
done
grep -q "^NCCL_DEBUG=WARN$" "$ENVF" || fail "NCCL_DEBUG did not reach the trainer"
grep -q "^MY_FLAG=1$" "$ENVF" || fail "an --allow_env variable did not reach the trainer"
grep -q "not passed to the trainer.*LD_PRELOAD" "$WORK/uagent.log" || fail "the agent did not say what it dropped"
# A log folder outside what the agent serves (its runtime folder, cwd, HOME): refused.
ucmd "$BIN/submit_tool" --head "$UEP" --log_dir /var/tmp/tf-elsewhere-$$ synthetic --steps 1 \
  > "$WORK/submit2.out" 2>&1
grep -q "exit FAILED: log_dir /var/tmp/tf-elsewhere-$$ lies outside" "$WORK/submit2.out" ||
  fail "a log folder outside was not refused: $(cat "$WORK/submit2.out")"
[ -e /var/tmp/tf-elsewhere-$$ ] && fail "the agent created the refused log folder"
kill -TERM "$uagent" "$uhead"; wait "$uagent" "$uhead" 2>/dev/null
# A clean exit leaves nothing behind.
ls "/tmp/tunefleet-$(id -u "$U")/agent-u1" 2>/dev/null | grep -qE "agent.lock|trainers.sock" &&
  fail "the agent left its lock or socket behind"
rm -rf "$UHOME" "/tmp/tunefleet-$(id -u "$U")"
finish
