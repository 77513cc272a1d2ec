#!/usr/bin/env bash
# Installs the Debian 12 packages tunefleet builds and runs with (--tests: and tests with).
# Idempotent: when everything is present it only says so; otherwise it runs `apt-get update`
# once, then installs what is missing. Downloads nothing from anywhere but Debian's archive.
set -euo pipefail

usage() {
  cat <<'U'
usage: scripts/setup.sh [--tests]

Installs the Debian 12 packages tunefleet needs from Debian's archive (apt-get update once, then
apt-get install of what is missing; nothing when all are present).
  (no flag)  what building and running tunefleet needs: the main job, `bazel run //hpo -- sweep`
  --tests    also what the tests and CI need: CMake, clang (thread-safety analysis, format check),
             Optuna, PyTorch, a localhost Slurm cluster, pdsh, iproute2, procps, bc
U
}

TESTS=0
for a in "$@"; do
  case "$a" in
    --tests) TESTS=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup: unknown argument '$a' (scripts/setup.sh --help)" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  # build
  bazel-bootstrap bazel-rules-java g++
  # libraries
  libtorch-dev libgloo-dev libzmq3-dev cppzmq-dev libabsl-dev libprotobuf-dev protobuf-compiler
  libucx-dev libyaml-cpp-dev libgtest-dev libgmock-dev nlohmann-json3-dev libicu-dev
  # an optimized BLAS for Debian's LibTorch (the default reference BLAS is 10x slower)
  libopenblas0-pthread
)
TEST_PACKAGES=(
  # the CMake build CI checks (what GPU hosts build with); clang: scripts/thread_safety_check.sh
  # (Abseil's lock annotations) and clang-format (scripts/format_check.sh)
  cmake clang clang-format
  # Optuna reads our journals; iproute2 makes network namespaces; the shell tests use pgrep
  # (procps) and bc; PyTorch runs the example training program of a program sweep
  # (tests/integration/program_sweep_test: examples/program/train_ddp.py over Gloo)
  python3 python3-optuna iproute2 procps bc python3-torch
  # a localhost Slurm cluster (tests/integration/slurm_test, slurm_hostlist_test)
  slurmctld slurmd slurm-client
  # head --start_agents pdsh through pdsh's exec module (tests/integration/pdsh_test,
  # pdsh_backend_test)
  pdsh
)
if [ "$TESTS" -eq 1 ]; then
  PACKAGES+=("${TEST_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
