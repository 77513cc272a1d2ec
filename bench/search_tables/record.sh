#!/usr/bin/env bash
# Records the search-efficiency tables (bench/search_tables/SOURCE.md): the full grids of
# sts_grid.yaml (Sentence-BERT on STS-B), nli_grid.yaml (NLI on SICK), cls_grid.yaml
# (classification on SICK), sickr_grid.yaml (Sentence-BERT on SICK-R) and sts5_grid.yaml (STS-B,
# five parameters), each trial one epoch
# without pruning, and copies each journal to bench/search_tables/NAME_SUFFIX.log.
# Run from the repository root:  bench/search_tables/record.sh HPO_BINARY SUFFIX [key=value ...]
#   e.g. bench/search_tables/record.sh bazel-bin/hpo/hpo cpu
#        bench/search_tables/record.sh build/gpu/bin/hpo h100 max_concurrent_trials=4
# key=value arguments override every sweep; TABLES="sts nli cls" (the default; also sickr,
# sts5) picks the tables.
set -euo pipefail
HPO=$1 SUFFIX=$2
shift 2
mkdir -p runs/tables/sick
# SICK's TRAIN and TRIAL rows, each file with the header.
awk -F'\t' '{ sub(/\r$/, "") } NR == 1 || $12 == "TRAIN"' data/sick/SICK.txt > runs/tables/sick/train.txt
awk -F'\t' '{ sub(/\r$/, "") } NR == 1 || $12 == "TRIAL"' data/sick/SICK.txt > runs/tables/sick/trial.txt
for table in ${TABLES:-sts nli cls}; do
  journal=runs/tables/${table}_grid_$SUFFIX/journal.log
  rm -rf "$(dirname "$journal")"
  start=$(date +%s)
  "$HPO" sweep "bench/search_tables/${table}_grid.yaml" --journal "$journal" "$@"
  echo "$table table: $(( $(date +%s) - start )) s"
  cp "$journal" "bench/search_tables/${table}_bert_tiny_$SUFFIX.log"
done
