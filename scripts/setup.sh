#!/usr/bin/env bash
# Installs the Debian 12 packages tunefleet builds and tests with. Idempotent: when everything
# is present it only says so; otherwise it runs `apt-get update` once, then installs what is
# missing. Downloads nothing from anywhere but Debian's package archive.
set -euo pipefail

PACKAGES=(
  # build
  bazel-bootstrap bazel-rules-java g++ cmake
  # clang: only for scripts/thread_safety_check.sh (Abseil's lock annotations; CI runs it)
  clang
  # libraries
  libtorch-dev libgloo-dev libzmq3-dev cppzmq-dev libabsl-dev libprotobuf-dev protobuf-compiler
  libucx-dev libyaml-cpp-dev libgtest-dev libgmock-dev nlohmann-json3-dev libicu-dev
  # an optimized BLAS for Debian's LibTorch (the default reference BLAS is 10x slower)
  libopenblas0-pthread
  # tests: Optuna reads our journals; iproute2 makes network namespaces; the shell tests use
  # pgrep (procps) and bc; PyTorch runs the example training program of a program sweep
  # (tests/integration/program_sweep_test: examples/program/train_ddp.py over Gloo)
  python3 python3-optuna iproute2 procps bc python3-torch
  # tests: a localhost Slurm cluster (tests/integration/slurm_test, //tests/launcher:slurm_hostlist_test)
  slurmctld slurmd slurm-client
  # tests: head --start_agents pdsh through pdsh's exec module (tests/integration/pdsh_test,
  # //tests/launcher:pdsh_backend_test)
  pdsh
)

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
