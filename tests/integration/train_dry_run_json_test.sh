#!/usr/bin/env bash
# `trainer train --dry_run --json` (trainer/commands/train_dry_run.h): one JSON object whose
# samples_per_epoch is the training data's row count (padded to WORLD_SIZE), the resolved keys
# with the overrides applied and typed, each --check's verdict; a bad config is one line, exit 2.
# Args: path of trainer.
TRAINER=$1
source tests/integration/lib.sh
source tests/integration/expect_lib.sh
CONFIG=configs/sbert_stsb.yaml
ROWS=$(wc -l < data/stsbenchmark/sts-train.csv)  # stsb: one example a line, no header

json() { timeout 20 "$TRAINER" train --config "$CONFIG" --dry_run --json "$@"; }
field() { $PY -c 'import json,sys; v=json.load(sys.stdin); exec(sys.argv[1])' "$1"; }

out=$(json train.lr=3e-5 model.pooling=cls) || fail "the dry run exited $?"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "not one line: $out"
field "assert v['train_examples'] == $ROWS, v['train_examples']" <<< "$out" || fail "train_examples: $out"
field "assert v['samples_per_epoch'] == $ROWS, v" <<< "$out" || fail "samples_per_epoch: $out"
field "assert v['keys']['train.lr'] == 3e-5 and v['keys']['model.pooling'] == 'cls'" <<< "$out" ||
  fail "overrides not resolved: $out"
field "assert v['keys']['train.epochs'] == 1 and v['keys']['train.shuffle'] is True" <<< "$out" ||
  fail "typed keys: $out"
field "assert v['keys']['model.path'] == 'data/bert-tiny-random' and v['data_error'] == ''" <<< "$out" ||
  fail "paths as written: $out"
# Every trainer key, once.
field "assert len(v['keys']) == 56, sorted(v['keys'])" <<< "$out" || fail "not every key: $out"
field "assert v['keys']['train.batch_sampler'] == ''" <<< "$out" || fail "batch_sampler: $out"
# The files and folders it names (set ones only, paths as written), for hpo's checks.
field "assert v['files'] == [{'key': 'model.path', 'path': 'data/bert-tiny-random', 'kind': 'folder'}, {'key': 'task.train', 'path': v['keys']['task.train'], 'kind': 'file'}, {'key': 'task.eval', 'path': v['keys']['task.eval'], 'kind': 'file'}], v['files']" <<< "$out" ||
  fail "files: $out"

# Padded to a multiple of the ranks, as DistributedSampler pads an epoch.
out=$(WORLD_SIZE=4 json) || fail "WORLD_SIZE=4 exited $?"
field "assert v['world_size'] == 4 and v['samples_per_epoch'] == ($ROWS + 3) // 4 * 4, v" <<< "$out" ||
  fail "padding: $out"

# Each --check alone on top of the overrides.
out=$(json --check train.epochs=1.5 --check=train.epochs=2 train.lr=1e-4) || fail "checks exited $?"
field "c = v['checks']; assert c[0]['override'] == 'train.epochs=1.5' and 'expected an integer' in c[0]['error'] and c[1]['error'] == '', c" <<< "$out" ||
  fail "checks: $out"
field "assert v['keys']['train.epochs'] == 1" <<< "$out" || fail "a check leaked into keys: $out"

# The preflight (trainer/commands/train_preflight.h): the model folder and its tokenizer read, a
# searched one checked too, the memory estimate of each batch size the checks set.
out=$(json --check train.batch_size=16 --check train.batch_size=128 --check model.path=/nonexistent/m) ||
  fail "preflight exited $?"
field "p = v['preflight']; assert p['model']['error'] == '' and p['model']['parameters'] > 4000000 and p['least_tokens'] == 2, p" \
  <<< "$out" || fail "preflight model: $out"
field "m = {b['batch']: b for b in v['preflight']['memory']}; assert {16, 128} <= set(m) and m[128]['bytes'] > 2 * m[16]['bytes'] and m[16]['least_bytes'] < m[16]['bytes'], m" \
  <<< "$out" || fail "preflight memory: $out"
field "assert v['preflight']['models'] == [{'path': '/nonexistent/m', 'error': '/nonexistent/m: the model folder holds no config.json'}], v['preflight']" \
  <<< "$out" || fail "preflight models: $out"

# As the real run: the loss registry (in trainer_torch) checks task.type and takes its own keys.
out=$(json task.type=contrastive task.margin=0.25) || fail "contrastive exited $?"
field "assert v['keys']['task.type'] == 'contrastive' and v['keys']['task.margin'] == '0.25', v['keys']" \
  <<< "$out" || fail "task settings: $out"
one_line_error json task.type=nope
expect 2 "task.type" json task.type=nope

# Data that cannot be read here: data_error, samples_per_epoch 0, exit 0.
out=$(json task.train=/nonexistent/train.csv) || fail "missing data exited $?"
field "assert v['samples_per_epoch'] == 0 and v['data_error'] != ''" <<< "$out" || fail "data_error: $out"

# A bad config: the usual one line naming file, line and key, exit 2, nothing on stdout.
one_line_error json train.epochs=abc
expect 2 "configs/sbert_stsb.yaml: override 'train.epochs=abc': train.epochs: expected an integer" \
  json train.epochs=abc
LINE=$(grep -n '^  epochs: 1' "$CONFIG" | cut -d: -f1)
sed 's/^  epochs: 1/  epochs: abc/' "$CONFIG" > "$WORK/bad.yaml"
one_line_error timeout 20 "$TRAINER" train --config "$WORK/bad.yaml" --dry_run --json
expect 2 "bad.yaml:$LINE: train.epochs: expected an integer" \
  timeout 20 "$TRAINER" train --config "$WORK/bad.yaml" --dry_run --json
one_line_error json train.nope=1
one_line_error timeout 20 "$TRAINER" train --config "$CONFIG" --json
one_line_error env WORLD_SIZE=0 "$TRAINER" train --config "$CONFIG" --dry_run --json
finish
