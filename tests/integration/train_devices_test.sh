#!/usr/bin/env bash
# `trainer train` as its own launcher (train.devices, --gpu_ids; trainer/distributed/local_ranks.h), on the
# CPU (Gloo over loopback):
#  1. train.devices=2 with batch 8 logs the losses of one process with batch 16 (dropout 0, file
#     order, fp32) within 1e-4, and, as a check that can fail, not with batch 16 per rank; the
#     parent prints the global batch once, rank 0 the rest, nothing on stderr; with
#     train.strategy=zero1 too (within 1e-5 of ddp), its estimate and its held AdamW state half
#     of ddp's;
#  2. rank 1 killed (SIGKILL): every rank ends, the parent prints one line naming rank 1 and the
#     signal, exits 137, and no process is left; SIGINT to the parent: the same, exit 130;
#     the parent killed (SIGKILL): the ranks die with it (PR_SET_PDEATHSIG);
#  3. --gpu_ids on a CPU-only machine and bad train.devices values: one line, exit 2;
#  4. under a launcher (RANK / WORLD_SIZE set) train.devices is ignored, and rank 0 says so.
# Args: trainer binary, compare_runs.py.
TRAINER=$1 COMPARE=$2
source tests/integration/lib.sh
write_ddp_train_yaml "$WORK/base.yaml" train.max_steps=6 'task.eval=""'

train() {  # train OUT ARGS...: stdout to OUT.out, stderr to OUT.err; returns the exit code
  local out=$1; shift
  "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/$out" "$@" \
    > "$WORK/$out.out" 2> "$WORK/$out.err"
}
losses() { "$PY" -c "import json,sys; print(' '.join(str(json.loads(l)['train/loss']) for l in open(sys.argv[1])))" "$1/metrics.jsonl"; }

# 1. Two ranks of batch 8 = one process of batch 16.
train one || fail "one process: $(tail -2 "$WORK/one.err")"
train two train.devices=2 train.batch_size=8 || fail "train.devices=2: $(tail -3 "$WORK/two.err")"
echo "1 rank, batch 16:   $(losses "$WORK/one")"
echo "2 ranks, batch 8:   $(losses "$WORK/two")"
"$PY" "$COMPARE" "$WORK/one" "$WORK/two" 1e-4 || fail "2 ranks of batch 8 differ from 1 of batch 16"
[ "$(grep -c '^ranks    2 local ranks (Gloo on the CPU), started by this trainer; global batch 8 x 2 = 16, lr 0.0001' "$WORK/two.out")" -eq 1 ] ||
  fail "no single global-batch line: $(head -3 "$WORK/two.out")"
[ "$(grep -c '^ddp      2 ranks (gloo)' "$WORK/two.out")" -eq 1 ] || fail "rank 0 did not report 2 ranks: $(grep ddp "$WORK/two.out")"
[ "$(grep -c '^config ' "$WORK/two.out")" -eq 1 ] || fail "the config was printed $(grep -c '^config ' "$WORK/two.out") times"
[ ! -s "$WORK/two.err" ] || fail "stderr of a good run: $(head -3 "$WORK/two.err")"
# zero1: the same losses as ddp, half the AdamW state per rank (estimated and held).
train zero1 train.devices=2 train.batch_size=8 train.strategy=zero1 ||
  fail "train.strategy=zero1: $(tail -3 "$WORK/zero1.err")"
echo "2 ranks, zero1:     $(losses "$WORK/zero1")"
"$PY" "$COMPARE" "$WORK/two" "$WORK/zero1" 1e-5 || fail "zero1 differs from ddp"
"$PY" "$COMPARE" "$WORK/one" "$WORK/zero1" 1e-4 || fail "zero1 differs from 1 rank of batch 16"
grep -hE '^(memory|zero1|ddp) ' "$WORK/two.out" "$WORK/zero1.out"
grep -qE '^memory   estimate .* x 16 B = ' "$WORK/two.out" || fail "ddp's estimate: $(grep estimate "$WORK/two.out")"
grep -qE '^memory   estimate .* x 12 B \(AdamW state 1/2: ' "$WORK/zero1.out" || fail "zero1's estimate: $(grep estimate "$WORK/zero1.out")"
[ "$(grep -c '^zero1    2 ranks (gloo), .*keeps 1/N of the AdamW state' "$WORK/zero1.out")" -eq 1 ] || fail "no zero1 line"
ddp_state=$(sed -nE 's/^memory   AdamW state ([0-9.]+) MiB on this rank$/\1/p' "$WORK/two.out")
read -r z1_state z1_whole < <(sed -nE 's/^memory   AdamW state ([0-9.]+) MiB on this rank \(zero1: its 1\/2 share of ([0-9.]+) MiB\)$/\1 \2/p' "$WORK/zero1.out")
[ -n "$ddp_state" ] && [ -n "$z1_state" ] || fail "no AdamW state lines: $(grep 'AdamW state' "$WORK/two.out" "$WORK/zero1.out")"
[ "$z1_whole" = "$ddp_state" ] || fail "zero1's whole state $z1_whole MiB is not ddp's $ddp_state MiB"
(( $(echo "$z1_state * 2 - $ddp_state < 0.02 && $ddp_state - $z1_state * 2 < 0.02" | bc) )) ||
  fail "zero1 holds $z1_state MiB a rank, not half of ddp's $ddp_state MiB"
train two16 train.devices=2 || fail "train.devices=2, batch 16: $(tail -3 "$WORK/two16.err")"
"$PY" "$COMPARE" "$WORK/one" "$WORK/two16" 1e-4 --expect-differ > /dev/null ||
  fail "2 ranks of batch 16 match 1 of batch 16: the second rank did not train"

# 2. A rank dies, the parent is interrupted, the parent dies.
# start_long OUT: two ranks that train for long, in the background (parent's pid in $parent),
# once both ranks run and rank 0 logged a step; rank PIDs in $r0 and $r1.
start_long() {
  "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/$1" train.devices=2 \
    train.batch_size=8 train.max_steps=100000 > "$WORK/$1.out" 2> "$WORK/$1.err" &
  parent=$!
  wait_for 60 test -s "$WORK/$1/metrics.jsonl" || fail "$1: training never started: $(tail -3 "$WORK/$1.err")"
  r0= r1=
  local c
  for c in $(pgrep -P "$parent"); do
    grep -qxa 'RANK=0' <(tr '\0' '\n' < "/proc/$c/environ") && r0=$c
    grep -qxa 'RANK=1' <(tr '\0' '\n' < "/proc/$c/environ") && r1=$c
  done
  [ -n "$r0" ] && [ -n "$r1" ] || fail "$1: ranks not found among the children of $parent: $(pgrep -aP "$parent")"
}
# ended OUT RC PATTERN: the parent exited RC (within the grace), its last stderr line matches
# PATTERN and is the only one of its kind, and no process of the test is left.
ended() {
  local rc=0
  wait "$parent" || rc=$?
  echo "$1: exit $rc: $(tail -1 "$WORK/$1.err")"
  [ "$rc" -eq "$2" ] || fail "$1: exit $rc, not $2: $(cat "$WORK/$1.err")"
  tail -1 "$WORK/$1.err" | grep -qE "^trainer train: error: $3" || fail "$1: last line is not /$3/: $(cat "$WORK/$1.err")"
  [ "$(grep -cE "ended the (other|2) ranks" "$WORK/$1.err")" -eq 1 ] || fail "$1: not one ending line: $(cat "$WORK/$1.err")"
  wait_for 5 no_leftovers || fail "$1: processes left behind: $(pgrep -af "$WORK")"
}
start_long killed && { kill -9 "$r1"; ended killed 137 "rank 1 \(pid $r1\) was killed by signal 9 \(Killed\); ended the other ranks$"; }
start_long interrupted && { kill -INT "$parent"; ended interrupted 130 "interrupted by signal 2 \(Interrupt\): ended the 2 ranks$"; }
start_long orphaned && {
  kill -9 "$parent"; wait "$parent" 2>/dev/null
  wait_for 5 no_leftovers && echo "orphaned: the ranks died with their parent" ||
    fail "ranks outlived their parent: $(pgrep -af "$WORK")"
}

# 3. One-line errors, exit 2.
# bad NAME PATTERN ARGS...: `trainer train ARGS` exits 2 with one stderr line matching PATTERN.
bad() {
  local name=$1 pattern=$2 rc=0; shift 2
  train "$name" "$@" || rc=$?
  echo "$*: exit $rc: $(cat "$WORK/$name.err")"
  [ "$rc" -eq 2 ] || fail "$*: exit $rc, not 2"
  [ "$(wc -l < "$WORK/$name.err")" -eq 1 ] && grep -qE "^trainer train: error: $pattern" "$WORK/$name.err" ||
    fail "$*: not one line /$pattern/: $(cat "$WORK/$name.err")"
}
bad gpu_ids "--gpu_ids 0,1: this machine has no GPU" --gpu_ids 0,1
bad gpu_ids_text "--gpu_ids: expected GPU ids such as 0,1,2, got 'a,b'" --gpu_ids a,b
bad zero ".*train.devices: must be -1 \(every local GPU\), a number of ranks >= 1 or a list of GPU ids, got 0" train.devices=0
bad minus2 ".*train.devices: must be -1 .*, got -2" train.devices=-2
bad list ".*train.devices: lists GPU ids but this machine has no GPU" 'train.devices=[0]'
bad twice ".*train.devices: GPU 1 is listed twice" 'train.devices=[1,0,1]'

# 4. Under a launcher the setting is ignored (one rank of a world of 1), and rank 0 says so once.
RANK=0 WORLD_SIZE=1 train launched train.devices=2 || fail "under a launcher: $(tail -2 "$WORK/launched.err")"
[ "$(grep -c '^note     train.devices ignored: ranks come from the launcher$' "$WORK/launched.out")" -eq 1 ] ||
  fail "under a launcher: no note: $(head -3 "$WORK/launched.out")"
grep -q '^ranks ' "$WORK/launched.out" && fail "under a launcher the trainer started ranks itself"
"$PY" "$COMPARE" "$WORK/one" "$WORK/launched" 1e-6 > /dev/null || fail "under a launcher: not one process of batch 16"
# train.devices=-1 on a CPU-only machine: one rank, as before.
train all train.devices=-1 || fail "train.devices=-1: $(tail -2 "$WORK/all.err")"
grep -q '^ranks ' "$WORK/all.out" && fail "train.devices=-1 on the CPU started ranks"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
