#!/usr/bin/env bash
# Builds and tests tunefleet with CMake on a GPU host without Bazel; run from the repository root.
# Unpacks the .debs of scripts/fetch_gpu_debs.sh into a prefix, finds the CUDA LibTorch of the
# Python environment, configures (Ninja when present), builds with all cores, runs ctest.
#   scripts/gpu_build.sh [extra cmake -D arguments...]
# Environment (defaults): DEBS (.carry/debs), DEPS_PREFIX (/tmp/tfdeps), BUILD_DIR (build/gpu),
#   BUILD_TYPE (Release), JOBS (nproc), Torch_DIR (asked of PYTHON, else python3, else
#   /opt/torch/.venv/bin/python3), SKIP_TESTS=1 to only build, CTEST_ARGS (extra ctest
#   arguments; by default -LE optuna when /usr/bin/python3 lacks Optuna), BUILD_TARGETS (only
#   these targets, e.g. "hpo trainer agent head"; implies SKIP_TESTS=1).
# Afterwards run binaries with the printed LD_LIBRARY_PATH (they also carry an RPATH to the prefix).
set -euo pipefail

DEBS=${DEBS:-.carry/debs}
PREFIX=${DEPS_PREFIX:-/tmp/tfdeps}
BUILD_DIR=${BUILD_DIR:-build/gpu}
BUILD_TYPE=${BUILD_TYPE:-Release}
JOBS=${JOBS:-$(nproc)}

T0=$SECONDS
STEP=$SECONDS
log() { echo "gpu_build: $*" >&2; }
run() { echo "+ $*" >&2; "$@"; }
took() { log "$1: $((SECONDS - STEP)) s"; STEP=$SECONDS; }
# shellcheck disable=SC2154  # rc is assigned inside the trap
trap 'rc=$?; if [ $rc -ne 0 ]; then log "FAILED (exit $rc) after $((SECONDS - T0)) s"; fi' EXIT

if [ ! -f CMakeLists.txt ] || [ ! -d common ]; then
  log "run me from the repository root"; exit 2
fi
command -v cmake >/dev/null || { log "cmake not found"; exit 2; }

# ---- 1. Unpack the .debs into PREFIX (skipped when they and the host are unchanged) ----------
# unpack DEB DEST: dpkg -x, or ar + tar where there is no dpkg.
unpack() {
  if command -v dpkg-deb >/dev/null; then
    dpkg -x "$1" "$2"
  else
    local deb tmp
    deb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
    tmp=$(mktemp -d)
    (cd "$tmp" && ar x "$deb")
    tar -xf "$tmp"/data.tar.* -C "$2"
    rm -rf "$tmp"
  fi
}
LDCONFIG=$(command -v ldconfig || echo /sbin/ldconfig)
# host_has SONAME: the dynamic loader's cache lists SONAME.
host_has() { "$LDCONFIG" -p 2>/dev/null | awk '{print $1}' | grep -qxF "$1"; }

shopt -s nullglob
debs=("$DEBS"/*.deb)
fallback=("$DEBS"/fallback/*.deb)
if [ ${#debs[@]} -gt 0 ]; then
  if [ -f "$DEBS/SHA256SUMS" ] && command -v sha256sum >/dev/null; then
    if ! (cd "$DEBS" && sha256sum -c --quiet SHA256SUMS); then
      log "$DEBS/SHA256SUMS does not match"; exit 1
    fi
  fi
  stamp=$( (ls -l "${debs[@]}" "${fallback[@]}"; "$LDCONFIG" -p 2>/dev/null | wc -l; cat "$0") |
          sha256sum | cut -c1-16)
  if [ -f "$PREFIX/.tunefleet-stamp" ] && [ "$(cat "$PREFIX/.tunefleet-stamp")" = "$stamp" ]; then
    log "$PREFIX is up to date with $DEBS"
  else
    if [ -e "$PREFIX" ] && [ ! -f "$PREFIX/.tunefleet-stamp" ] && [ -n "$(ls -A "$PREFIX")" ]; then
      log "$PREFIX exists and was not made by this script; set DEPS_PREFIX elsewhere"; exit 1
    fi
    run rm -rf "${PREFIX:?}"
    mkdir -p "$PREFIX"
    for deb in "${debs[@]}"; do
      echo "+ dpkg -x $deb $PREFIX" >&2
      unpack "$deb" "$PREFIX"
    done
    # Runtime libraries most hosts have: only those the host lacks, each with the fallback
    # packages it depends on (a newer libkrb5-3 needs its own libkrb5support0, not the host's).
    declare -A fallback_of=() added=()
    for deb in "${fallback[@]}"; do fallback_of[$(basename "$deb" | cut -d_ -f1)]=$deb; done
    add_fallback() {  # add_fallback DEB WHY
      local name; name=$(basename "$1" | cut -d_ -f1)
      [ -n "${added[$name]:-}" ] && return 0
      added[$name]=1
      log "$2: adding $(basename "$1")"
      unpack "$1" "$PREFIX"
      if command -v dpkg-deb >/dev/null; then
        local dep
        for dep in $(dpkg-deb -f "$1" Depends 2>/dev/null | tr ',|' '\n\n' | awk '{print $1}'); do
          [ -n "${fallback_of[$dep]:-}" ] && add_fallback "${fallback_of[$dep]}" "$name depends on $dep"
        done
      fi
      return 0
    }
    for deb in "${fallback[@]}"; do
      tmp=$(mktemp -d)
      unpack "$deb" "$tmp"
      missing=""
      sonames=$(find "$tmp" -name 'lib*.so.*' | sed 's|.*/||' | grep -E '\.so\.[0-9]+$' | sort -u)
      for so in $sonames; do
        host_has "$so" || missing="$missing $so"
      done
      [ -z "$missing" ] || add_fallback "$deb" "host lacks$missing"
      rm -rf "$tmp"
    done
    # Merged /usr: a few Debian packages still ship /lib/<arch>; move them next to the rest.
    if [ -d "$PREFIX/lib" ]; then
      mkdir -p "$PREFIX/usr/lib"
      cp -a "$PREFIX/lib/." "$PREFIX/usr/lib/"
      rm -rf "${PREFIX:?}/lib"
    fi
    echo "$stamp" > "$PREFIX/.tunefleet-stamp"
  fi
  took "unpack ${#debs[@]} .debs into $PREFIX"
  DEPS_ARGS=(-DTUNEFLEET_DEPS_PREFIX="$PREFIX")
  ARCH=$(gcc -dumpmachine 2>/dev/null | sed 's/-pc-/-/' || echo x86_64-linux-gnu)
  export LD_LIBRARY_PATH="$PREFIX/usr/lib/$ARCH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  log "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
else
  log "no .debs in $DEBS: using the host's libraries only"
  DEPS_ARGS=()
fi

# ---- 2. LibTorch ---------------------------------------------------------------------------
FIND_TORCH='import os, torch
print(os.path.join(os.path.dirname(torch.__file__), "share/cmake/Torch"))'
if [ -z "${Torch_DIR:-}" ]; then
  for py in ${PYTHON:-} python3 /opt/torch/.venv/bin/python3; do
    command -v "$py" >/dev/null || continue
    if Torch_DIR=$("$py" -c "$FIND_TORCH" 2>/dev/null); then
      log "Torch_DIR from $py"
      break
    fi
    Torch_DIR=""
  done
fi
if [ -z "${Torch_DIR:-}" ] || [ ! -d "$Torch_DIR" ]; then
  log "no LibTorch: set Torch_DIR=<torch>/share/cmake/Torch or PYTHON"; exit 1
fi
log "Torch_DIR=$Torch_DIR"
# PyTorch's CMake config looks for the CUDA toolkit; help it to the usual place.
if ! command -v nvcc >/dev/null; then
  for cuda in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [ -n "$cuda" ] && [ -x "$cuda/bin/nvcc" ]; then export PATH="$cuda/bin:$PATH"; break; fi
  done
fi

# ---- 3. Configure, build, test --------------------------------------------------------------
GEN_ARGS=()
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  GEN_ARGS=(-G Ninja)
fi
run cmake -S . -B "$BUILD_DIR" "${GEN_ARGS[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  -DTorch_DIR="$Torch_DIR" "${DEPS_ARGS[@]}" "$@"
took "configure"
# shellcheck disable=SC2086  # BUILD_TARGETS is a list
run cmake --build "$BUILD_DIR" -j "$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
took "build ($JOBS jobs)"
if [ "${SKIP_TESTS:-0}" != 1 ] && [ -z "${BUILD_TARGETS:-}" ]; then
  # Tests that import Optuna (label "optuna") run Debian's /usr/bin/python3 + python3-optuna
  # 3.1; skip them where that is missing. CTEST_ARGS="..." overrides (CTEST_ARGS= runs all).
  if [ -z "${CTEST_ARGS+set}" ]; then
    CTEST_ARGS=""
    if ! /usr/bin/python3 -c 'import optuna' 2>/dev/null; then
      CTEST_ARGS="-LE optuna"
      log "no Optuna under /usr/bin/python3: skipping the tests labelled optuna"
    fi
  fi
  # shellcheck disable=SC2086  # CTEST_ARGS is a list of words
  (cd "$BUILD_DIR" && run ctest --output-on-failure -j "$JOBS" $CTEST_ARGS)
  took "ctest"
fi
# The device line shows whether the trainer sees CUDA.
"$BUILD_DIR/bin/trainer" train --config configs/sbert_stsb.yaml --dry_run 2>&1 |
  grep '^device' || true
log "OK in $((SECONDS - T0)) s; binaries in $BUILD_DIR/bin (LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-})"
