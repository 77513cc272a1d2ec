#!/usr/bin/env bash
# Data parallelism on the CPU (Gloo over loopback), `trainer train` as torchrun would start it:
#  1. two ranks with per-rank batch 8 reproduce one process with batch 16 (dropout 0, file
#     order): every step's loss and gradient norm, the evaluations, and the final weights within
#     1e-5 — for sts (CosineSimilarityLoss), mnrl with the positives gathered across ranks (and,
#     as a check that can fail, not without the gathering), classification (the pooler and the
#     head in the gradient buckets), and 2 ranks x batch 4 x grad_accum 2; and cached_mnrl on
#     SICK triplets (GradCache's mini-batches, hard negatives gathered) reproduces mnrl;
#  2. a stalled rank (SIGSTOP): the other fails within train.ddp_timeout_s with a one-line error;
#  3. a MASTER_PORT in use and a rendezvous nobody joins: one-line errors, no hang;
#  4. `trainer encode` on 2 ranks writes the embeddings of 1 process in input order, byte for
#     byte (the ranks compute the same length-sorted batches one process would), at batch 1
#     and at batch 32; on 4 ranks at batch 32 too.
#  Cases of 1 run on 4 ranks (batch 4) as well: sts and mnrl.
# Args: trainer binary, compare_runs.py.
TRAINER=$1 COMPARE=$2
source tests/integration/lib.sh
write_ddp_train_yaml "$WORK/base.yaml"
# ours_last FILE PATTERN: the trainer wrote exactly one error line, the last one, matching PATTERN
# (c10d may log its own lines before it).
ours_last() {
  [ "$(grep -c '^trainer train: error: ' "$1")" -eq 1 ] || fail "$1: not one error line: $(cat "$1")"
  tail -1 "$1" | grep -qE "^trainer train: error: $2" || fail "$1: last line is not /$2/: $(tail -1 "$1")"
}
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# runn N OUT ARGS...: N ranks over Gloo on loopback; all must succeed.
runn() {
  local n=$1 out=$2; shift 2
  local port; port=$(free_port)
  local pids=() r rc0 rcs=""
  for ((r = 1; r < n; r++)); do
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=$n RANK=$r LOCAL_RANK=$r OMP_NUM_THREADS=1 \
      "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/$out" "$@" > "$WORK/$out.r$r.log" 2>&1 &
    pids+=($!)
  done
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=$n RANK=0 LOCAL_RANK=0 OMP_NUM_THREADS=$(( n > 2 ? 1 : 2 )) \
    "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/$out" "$@" > "$WORK/$out.r0.log" 2>&1
  rc0=$?
  for r in "${!pids[@]}"; do wait "${pids[$r]}" || rcs="$rcs rank $((r + 1)) exited $?"; done
  [ "$rc0" -eq 0 ] && [ -z "$rcs" ] || { fail "$out: rank 0 exited $rc0;$rcs: $(tail -2 "$WORK/$out.r0.log") $(tail -2 "$WORK/$out.r1.log")"; return 1; }
}
run2() { runn 2 "$@"; }
run1() {
  local out=$1; shift
  "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/$out" "$@" > "$WORK/$out.log" 2>&1 ||
    { fail "$out: $(tail -2 "$WORK/$out.log")"; return 1; }
}
same() { echo "== $1 vs $2"; "$PY" "$COMPARE" "$WORK/$1" "$WORK/$2" 1e-5 "${@:3}" || fail "$1 and $2 differ"; }

# 1. Equivalence.
run1 sts1 && run2 sts2 train.batch_size=8 && same sts1 sts2
grep -q "^ddp      2 ranks (gloo)" "$WORK/sts2.r0.log" || fail "rank 0 did not report DDP: $(head -12 "$WORK/sts2.r0.log")"
[ ! -s "$WORK/sts2.r1.log" ] || fail "rank 1 printed: $(head -3 "$WORK/sts2.r1.log")"
run2 accum train.batch_size=4 train.grad_accum=2 && same sts1 accum
MNRL=(task.type=mnrl task.train=data/paws-wiki/dev.tsv task.format=paws 'task.eval=""' train.batch_sampler=default)
run1 mnrl1 "${MNRL[@]}" && run2 mnrl2 "${MNRL[@]}" train.batch_size=8 && same mnrl1 mnrl2
run2 mnrl2_local "${MNRL[@]}" train.batch_size=8 task.mnrl_gather=false &&
  same mnrl1 mnrl2_local --expect-differ
# cached_mnrl (GradCache) on 2 ranks with hard negatives gathered: the loss and the weights of
# mnrl in one process (23 steps: the 383 rows' short 24th batch is padded differently by ranks).
TRIPLETS=(task.type=mnrl task.train=data/sick-triplets/train.jsonl task.format=jsonl 'task.eval=""'
          train.batch_sampler=default train.max_steps=23)
run1 trip1 "${TRIPLETS[@]}" &&
  run2 cached2 "${TRIPLETS[@]}" task.loss=cached_mnrl task.cached_mini_batch=4 train.batch_size=8 &&
  same trip1 cached2
CLS=(task.type=classification task.train=data/sick/SICK.txt task.format=sick 'task.eval=""' task.num_labels=3
     model.head=data/golden/cls_head.safetensors)
run1 cls1 "${CLS[@]}" && run2 cls2 "${CLS[@]}" train.batch_size=8 && same cls1 cls2
# Four ranks of batch 4 (the ring and the shards of more than two; MNRL negatives from all four).
runn 4 sts4 train.batch_size=4 && same sts1 sts4
grep -q "^ddp      4 ranks (gloo)" "$WORK/sts4.r0.log" || fail "rank 0 did not report 4 ranks: $(grep ddp "$WORK/sts4.r0.log")"
runn 4 mnrl4 "${MNRL[@]}" train.batch_size=4 && same mnrl1 mnrl4

# 2. A stalled rank: rank 1 stops (SIGSTOP) once training runs; rank 0 must fail within the
# timeout (5 s, measured from the SIGSTOP to its exit) with one line naming itself.
port=$(free_port)
MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=1 \
  "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/stall" train.batch_size=8 \
  train.max_steps=100000 'task.eval=""' train.ddp_timeout_s=5 > "$WORK/stall.r1.log" 2>&1 &
p1=$!
MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=0 \
  "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/stall" train.batch_size=8 \
  train.max_steps=100000 'task.eval=""' train.ddp_timeout_s=5 > "$WORK/stall.r0.log" 2>"$WORK/stall.r0.err" &
p0=$!
wait_for 60 test -s "$WORK/stall/metrics.jsonl" || fail "the stall run never started training"
kill -STOP $p1
stopped=$(date +%s.%N)
rc=0; wait $p0 || rc=$?
took=$(echo "$(date +%s.%N) - $stopped" | bc)
kill -9 $p1 2>/dev/null; wait $p1 2>/dev/null
echo "stalled rank: rank 0 exited $rc after ${took} s: $(cat "$WORK/stall.r0.err")"
[ "$rc" -ne 0 ] || fail "rank 0 did not fail when rank 1 stalled"
(( $(echo "$took <= 5.0" | bc) )) || fail "rank 0 took ${took} s to fail after the stall (timeout 5 s)"
ours_last "$WORK/stall.r0.err" "rank 0: "

# 3. A port in use, a rendezvous nobody joins.
port=$(free_port)
"$PY" -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$port)); s.listen(); time.sleep(30)" &
holder=$!
sleep 0.5
MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=0 \
  "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/busy" train.ddp_timeout_s=3 \
  > /dev/null 2> "$WORK/busy.err"; rc=$?
kill $holder 2>/dev/null; wait $holder 2>/dev/null
echo "port in use: exit $rc: $(cat "$WORK/busy.err")"
[ "$rc" -ne 0 ] || fail "port in use: exit 0"
ours_last "$WORK/busy.err" "rank 0: rendezvous: MASTER_PORT $port is already in use"
start=$(date +%s)
MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) WORLD_SIZE=2 RANK=1 \
  "$TRAINER" train --config "$WORK/base.yaml" output.dir="$WORK/alone" train.ddp_timeout_s=3 \
  > /dev/null 2> "$WORK/alone.err"; rc=$?
echo "nobody to meet: exit $rc after $(( $(date +%s) - start )) s: $(cat "$WORK/alone.err")"
[ "$rc" -ne 0 ] || fail "lonely rank: exit 0"
ours_last "$WORK/alone.err" "rank 1: rendezvous at 127.0.0.1:[0-9]+ failed"
# 4. Encoding on 2 ranks.
cut -f6 data/stsbenchmark/sts-dev.csv | head -700 > "$WORK/sentences.txt"
enc1() { "$TRAINER" encode --model data/bert-tiny-random --input "$WORK/sentences.txt" "$@" 2>/dev/null; }
encn() {
  local n=$1; shift
  local port; port=$(free_port)
  local pids=() r rc ok=0
  for ((r = 1; r < n; r++)); do
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=$n RANK=$r enc1 "$@" --output "$WORK/unused" &
    pids+=($!)
  done
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=$n RANK=0 enc1 "$@"; rc=$?
  for r in "${pids[@]}"; do wait "$r" || ok=1; done
  [ "$rc" -eq 0 ] && [ "$ok" -eq 0 ]
}
enc2() { encn 2 "$@"; }
enc1 --batch_size 1 --output "$WORK/one.jsonl" || fail "encode, 1 process"
enc2 --batch_size 1 --output "$WORK/two.jsonl" || fail "encode, 2 ranks"
[ ! -e "$WORK/unused" ] || fail "rank 1 wrote an output file"
cmp -s "$WORK/one.jsonl" "$WORK/two.jsonl" && echo "encode, batch 1: 2 ranks = 1 process, byte for byte" ||
  fail "encode on 2 ranks differs from 1 process (batch 1)"
enc1 --batch_size 32 --output "$WORK/one32.jsonl" && enc2 --batch_size 32 --output "$WORK/two32.jsonl" ||
  fail "encode, batch 32"
[ "$(wc -l < "$WORK/two32.jsonl")" -eq 700 ] || fail "encode, batch 32: $(wc -l < "$WORK/two32.jsonl") lines"
cmp -s "$WORK/one32.jsonl" "$WORK/two32.jsonl" && echo "encode, batch 32: 2 ranks = 1 process, byte for byte" ||
  fail "encode on 2 ranks differs from 1 process (batch 32)"
encn 4 --batch_size 32 --output "$WORK/four32.jsonl" || fail "encode, 4 ranks, batch 32"
cmp -s "$WORK/one32.jsonl" "$WORK/four32.jsonl" && echo "encode, batch 32: 4 ranks = 1 process, byte for byte" ||
  fail "encode on 4 ranks differs from 1 process (batch 32)"
[ ! -e "$WORK/unused" ] || fail "a rank other than 0 wrote an output file"
wait_for 5 no_leftovers || fail "processes left behind: $(pgrep -af "$WORK")"
finish
