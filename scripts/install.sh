#!/usr/bin/env bash
# Puts tunefleet's programs on a PATH: copies hpo, head, agent and trainer (with trainer_torch,
# which `trainer` runs for its LibTorch commands) into PREFIX/bin, where each finds the others
# beside itself (common/binary_path.h).
#   bazel run //:install -- PREFIX        e.g. bazel run //:install -- ~/.local
# A relative PREFIX is taken from the directory you ran bazel in.
set -euo pipefail

usage() { echo "usage: bazel run //:install -- PREFIX   (installs into PREFIX/bin)"; }
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") usage >&2; exit 2 ;;
esac
[ $# -eq 1 ] || { echo "install: one PREFIX, got $#: $*" >&2; usage >&2; exit 2; }
prefix=$1
if [[ "$prefix" != /* ]]; then
  prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"
fi

# The programs: under bazel run, in this script's runfiles; in CMake's build, beside it in bin/.
runfiles="${RUNFILES_DIR:-$0.runfiles}"
find_program() {
  local target=$1 name=${1##*/} c
  for c in "$runfiles/tunefleet/$target" "$(dirname "$0")/$name"; do
    if [ -x "$c" ] && [ -f "$c" ]; then echo "$c"; return 0; fi
  done
  echo "install: $name not found (built with this target? looked in $runfiles/tunefleet/$target)" >&2
  return 1
}

mkdir -p "$prefix/bin"
for target in hpo/hpo launcher/head/head launcher/agent/agent trainer/trainer trainer/trainer_torch; do
  src=$(find_program "$target")
  install -m 0755 "$src" "$prefix/bin/${target##*/}"
done
echo "install: hpo, head, agent, trainer (and trainer_torch) in $prefix/bin"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install: $prefix/bin is not on PATH: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
