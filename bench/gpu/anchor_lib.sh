# Sourced by the benchmarks against the PyTorch anchor (bench/train_throughput_vs_anchor.sh,
# bench/ddp_scaling_vs_anchor.sh), which take one command line and report the anchor alike.
# Not run by itself.
# shellcheck shell=bash

# anchor_args "$@": the command line ANCHOR.py BENCH_BINARY [MODEL] [BATCH...] as ANCHOR, BENCH,
# MODEL (default bert-base) and the array BATCHES (default 32 128).
# shellcheck disable=SC2034  # the sourcing script reads them
anchor_args() {
  ANCHOR=$1
  BENCH=$2
  MODEL=${3:-bert-base}
  shift $(( $# >= 3 ? 3 : 2 ))
  BATCHES=("$@")
  [ ${#BATCHES[@]} -gt 0 ] || BATCHES=(32 128)
}

# anchor_rows VARIANT: the anchor's JSON lines from stdin, each tagged "impl": "anchor" and the
# variant, so that one table can set them beside train_throughput_bench's lines.
anchor_rows() {
  grep '^{' | sed "s/^{/{\"impl\": \"anchor\", \"variant\": \"$1\", /"
}
