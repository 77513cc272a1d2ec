#!/usr/bin/env bash
# One GPU: the README's main job (`hpo sweep configs/lr.yaml`, dev mode, bert-tiny-random,
# 28 points) as shipped (trials write no checkpoint) and with output.checkpoint: true as before,
# alternated twice; then BERT-base (random init) bf16 trials as a sweep runs them now (no
# checkpoint) at batch 32 and 128, twice each, with their `time` lines; nsys's CUDA API summary
# of one batch-32 trial when nsys is on the host; the PyTorch anchor last.
source bench/ddp_calls/lib.sh
sed 's/output.checkpoint: false/output.checkpoint: true/; s#journal: runs/sbert-stsb-lr#journal: runs/ckpt#' configs/lr.yaml > /tmp/lr_ckpt.yaml
grep -q "output.checkpoint: true" /tmp/lr_ckpt.yaml || echo "sed did not apply"
for r in 1 2; do for c in configs/lr.yaml /tmp/lr_ckpt.yaml; do
  rm -rf runs; t0=$(date +%s.%N)
  $B/hpo sweep $c > "$O/sweep.$r.$(basename $c).log" 2>&1; rc=$?
  echo "$c: exit $rc, wall $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s; complete $(grep -c 'COMPLETE' "$O/sweep.$r.$(basename $c).log"), pruned $(grep -c 'PRUNED' "$O/sweep.$r.$(basename $c).log"); runs/ $(du -sh runs | cut -f1)"
  grep -E "^best trial" "$O/sweep.$r.$(basename $c).log" | tail -1
done; done
bert_base_random
for b in 32 128; do for r in 1 2; do
  rm -rf /tmp/tr; t0=$(date +%s.%N)
  $B/trainer train --config configs/sbert_stsb.yaml model.path=/tmp/bert-base-random train.precision=bf16 \
    train.batch_size=$b output.checkpoint=false output.dir=/tmp/tr > "$O/trial.$b.$r.log" 2>&1; rc=$?
  echo "batch $b exit $rc wall $(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')") s | $(grep -E '^done' "$O/trial.$b.$r.log" | cut -c10-100)"
  grep -E '^time|^graphs' "$O/trial.$b.$r.log"
done; done
if command -v nsys > /dev/null; then
  rm -rf /tmp/tr
  nsys profile -o /tmp/prof --force-overwrite true --stats=false $B/trainer_torch train --config configs/sbert_stsb.yaml \
    model.path=/tmp/bert-base-random train.precision=bf16 output.checkpoint=false output.dir=/tmp/tr > "$O/nsys_run.log" 2>&1
  nsys stats --report cuda_api_sum --format csv /tmp/prof.nsys-rep > "$O/nsys_api.csv" 2>&1
  head -15 "$O/nsys_api.csv" | cut -c1-160
else
  echo "no nsys on this host"
fi
for b in 32 128; do
  python3 .carry/bench/pytorch_anchor.py --model bert-base --precision bf16 --batch $b 2>/dev/null | grep '^{' | cut -c1-200
done
