#!/usr/bin/env bash
# One GPU: whole sweep-like trials (configs/sbert_stsb.yaml as trials run it: one epoch,
# evaluation every 50 steps, the best model and a checkpoint written), BERT-base (random init),
# bf16: before (checkpoint on the background writer at every evaluation, the best model written
# at once) and after (page-locked host copies, trainer/host_snapshot.h; the best model held in
# host memory until the next checkpoint or the end; a checkpoint at most every
# output.checkpoint_every_s, shown both at its default 300 and at 0 = every evaluation);
# process wall time and the `time` line of each. The "before" sources come from
# .carry/tmp/before_*. The GPU tests of the new code first; the anchor last.
source bench/ddp_calls/lib.sh
(cd build/gpu && ctest -R "host_snapshot_test|train_loop_test|step_graphs_test|background_writer_test|train_config_test" --output-on-failure) > "$O/ctest.log" 2>&1
echo "ctest exit $?: $(grep -E "tests passed|tests failed" "$O/ctest.log")"
build_before train_loop.h train_loop.cc train_command.cc
bert_base_random
for b in 32 128; do for r in 1 2; do for v in old new0 new; do
  bin=/tmp/${v%0}_bin; extra=""; [ $v = new0 ] && extra="output.checkpoint_every_s=0"
  rm -rf /tmp/tq; t0=$(date +%s.%N)
  TUNEFLEET_BIN_DIR=$bin $bin/trainer train --config configs/sbert_stsb.yaml $extra \
    model.path=/tmp/bert-base-random train.precision=bf16 train.batch_size=$b output.dir=/tmp/tq \
    > "$O/trial.$b.$v.$r.log" 2>&1; rc=$?
  wall=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')")
  echo "batch $b $v exit $rc wall ${wall} s | $(grep -E '^done' "$O/trial.$b.$v.$r.log" | cut -c10-100)"
  grep -E '^time' "$O/trial.$b.$v.$r.log"
done; done; done
dd if=/dev/zero of=/tmp/ddtest bs=1M count=1024 conv=fsync 2>&1 | tail -1; rm -f /tmp/ddtest
du -sh /tmp/tq/model /tmp/tq/checkpoint
for b in 32 128; do
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | grep '^{' | cut -c1-200
done
