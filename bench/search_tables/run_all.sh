#!/usr/bin/env bash
# Runs bench/search_efficiency on every table here with configs/lr.yaml (the nli, cls and sickr
# tables with their trainer, nli and cls with their metric; the five-parameter sts5 table with configs/lr5.yaml, which
# searches its other parameters), one JSONL file per table in DIR (default runs/search_efficiency).
#   bench/search_tables/run_all.sh [BENCH_BINARY] [DIR] [extra search_efficiency arguments...]
set -euo pipefail
BENCH=${1:-bazel-bin/bench/search_efficiency}
DIR=${2:-runs/search_efficiency}
shift $(( $# > 2 ? 2 : $# ))
mkdir -p "$DIR"
for table in bench/search_tables/*.log; do
  name=$(basename "$table" .log)
  task=${name%%_*}
  extra=()
  sweep=configs/lr.yaml
  if [ "$task" = sts5 ]; then
    sweep=configs/lr5.yaml
  elif [ "$task" = sickr ]; then
    extra=(trainer.config=bench/search_tables/sickr_trainer.yaml)
  elif [ "$task" != sts ]; then
    extra=(trainer.config="bench/search_tables/${task}_trainer.yaml" metric.name=eval/accuracy)
  fi
  start=$(date +%s)
  "$BENCH" --table "$table" --sweep "$sweep" "$@" "${extra[@]}" > "$DIR/$name.jsonl"
  echo "$name: $(( $(date +%s) - start )) s"
done
