#!/usr/bin/env bash
# Issue 35, acceptance 3: cached_mnrl (GradCache) trains a batch at which mnrl runs out of GPU
# memory. On one GPU: a BERT-base-sized random encoder (bert-base-uncased's config, this
# repository's uncased vocab) and 5749 triplets from STS-B train (sentence1, sentence2, a random
# row's sentence2); 4 steps each of mnrl at batch 1024 and 4096, cached_mnrl (mini-batch 128) at
# 1024 and 4096, and cached_mnrl with Matryoshka (768, 256, 64) at 4096, bf16, 128 tokens.
# Prints each run's exit code, wall time, nvidia-smi's peak and the trainer's step and memory
# lines. Args: TRAINER [PYTHON] (the python needs transformers). Writes under /tmp/cached_mnrl.
set -uo pipefail
TRAINER=${1:?usage: $0 TRAINER [PYTHON]} PY=${2:-python3} W=/tmp/cached_mnrl
mkdir -p "$W"
"$PY" - "$W" <<'PY'
import json, random, shutil, sys, torch
from transformers import BertConfig, BertModel
w = sys.argv[1]
torch.manual_seed(0)
BertModel(BertConfig()).save_pretrained(f"{w}/bert-base-random")
shutil.copy("data/bert-uncased-vocab/vocab.txt", f"{w}/bert-base-random/vocab.txt")
rows = [l.rstrip("\n").split("\t") for l in open("data/stsbenchmark/sts-train.csv", encoding="utf-8")]
rng = random.Random(0)
with open(f"{w}/triplets.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps({"anchor": r[5], "positive": r[6], "negative": rng.choice(rows)[6]}) + "\n")
PY
run() {  # name batch loss [extra task keys]
  local name=$1 bs=$2 loss=$3 extra=${4:-}
  cat > "$W/$name.yaml" <<Y
model: {path: $W/bert-base-random, max_seq_len: 128}
task: {type: mnrl, loss: $loss, train: $W/triplets.jsonl, format: jsonl$extra}
train: {max_steps: 4, batch_size: $bs, lr: 2e-5, precision: bf16, log_every_steps: 1, eval_every_steps: 0}
output: {dir: $W/$name, save: none, checkpoint: false}
Y
  (while sleep 0.2; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; done) > "$W/$name.mem" &
  local mon=$! s=$SECONDS
  "$TRAINER" train --config "$W/$name.yaml" > "$W/$name.log" 2>&1
  local rc=$?
  kill $mon
  echo "$name: batch $bs rc=$rc wall $((SECONDS - s)) s peak nvidia-smi $(sort -n "$W/$name.mem" | tail -1) MiB"
  grep -E "^step|out of memory|error|memory|steps  " "$W/$name.log" | tail -5
}
run mnrl1024 1024 mnrl
run mnrl4096 4096 mnrl
run cached1024 1024 cached_mnrl ", cached_mini_batch: 128"
run cached4096 4096 cached_mnrl ", cached_mini_batch: 128"
run cached4096m 4096 cached_mnrl ", cached_mini_batch: 128, matryoshka_dims: [768, 256, 64]"
