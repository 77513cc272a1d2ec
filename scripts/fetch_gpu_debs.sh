#!/usr/bin/env bash
# Downloads, on a Debian 12 machine, the .debs a GPU host without ZeroMQ, Abseil, yaml-cpp,
# GoogleTest, nlohmann-json, ICU or protoc needs to build and run tunefleet (scripts/gpu_build.sh
# unpacks them with dpkg -x). Usage: scripts/fetch_gpu_debs.sh [DIR]   (DIR defaults to .carry/debs)
# DIR/fallback/ holds runtime libraries of libzmq5 that most hosts already have; gpu_build.sh
# unpacks those only where the host lacks them. Idempotent: present .debs are kept; DIR/SHA256SUMS
# lists them all. Uses only `apt-get download` from the configured Debian archive.
set -euo pipefail

DIR=${1:-.carry/debs}
MAX_BYTES=$((40 * 1024 * 1024))

CORE=(
  libabsl-dev libabsl20220623          # Abseil headers + CMake config, shared libraries
  libyaml-cpp-dev libyaml-cpp0.7       # yaml-cpp
  libzmq3-dev libzmq5 cppzmq-dev       # ZeroMQ (zmq.h, libzmq.so) and zmq.hpp
  libsodium23 libpgm-5.3-0 libnorm1    # libzmq5's runtime libraries rare on other distributions
  libgtest-dev libgmock-dev            # GoogleTest / GoogleMock (static libraries + CMake config)
  nlohmann-json3-dev                   # header only
  libicu-dev libicu72                  # ICU 72: Unicode tables of trainer/wordpiece_tokenizer
  libprotobuf-dev libprotobuf32 libprotoc32 protobuf-compiler  # protoc 3.21 + headers (comm/proto)
  libucx-dev libucx0                   # UCX 1.13: bulk staging (comm/bulk_server, comm/bulk_fetch)
)
FALLBACK=(
  libbsd0 libmd0                       # libzmq5 -> libbsd0 -> libmd0
  libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1  # -> GSSAPI
  libnuma1 libibverbs1 librdmacm1      # libucx0's runtime libraries
)

if ! command -v apt-get >/dev/null; then
  echo "fetch_gpu_debs: needs apt-get (run on Debian 12)" >&2
  exit 1
fi
if [ "$(dpkg --print-architecture)" != amd64 ]; then
  echo "fetch_gpu_debs: this machine is $(dpkg --print-architecture); GPU hosts are amd64" >&2
fi

# fetch FOLDER PACKAGE...: downloads the candidate version of each package not already there.
fetch() {
  local folder=$1; shift
  mkdir -p "$folder"
  local pkg version stem
  # One apt-cache call for all: "pkg version" lines.
  while read -r pkg version; do
    if [ -z "$version" ] || [ "$version" = "(none)" ]; then
      echo "fetch_gpu_debs: no candidate for $pkg (run apt-get update?)" >&2
      exit 1
    fi
    stem="${pkg}_${version//:/%3a}"
    if [ -f "$folder/${stem}_amd64.deb" ] || [ -f "$folder/${stem}_all.deb" ]; then
      continue
    fi
    rm -f "$folder/${pkg}"_*.deb  # an older version
    echo "fetch_gpu_debs: apt-get download $pkg ($version)"
    (cd "$folder" &&
       { apt-get download -q "$pkg:amd64" 2>/dev/null || apt-get download -q "$pkg"; })
  done < <(apt-cache policy "$@" | awk '/^[^ ].*:$/ {sub(/:$/, ""); p = $0}
                                       /Candidate:/ {print p, $2}')
}

fetch "$DIR" "${CORE[@]}"
fetch "$DIR/fallback" "${FALLBACK[@]}"

(cd "$DIR" && sha256sum ./*.deb fallback/*.deb > SHA256SUMS)
echo "fetch_gpu_debs: $DIR"
(cd "$DIR" && ls -l ./*.deb fallback/*.deb | awk '{printf "  %9d  %s\n", $5, $NF}')
total=$(cat "$DIR"/*.deb "$DIR"/fallback/*.deb | wc -c)
count=$(ls "$DIR"/*.deb "$DIR"/fallback/*.deb | wc -l)
echo "fetch_gpu_debs: $count .debs, $total bytes ($((total / 1024)) KiB)"
if [ "$total" -gt "$MAX_BYTES" ]; then
  echo "fetch_gpu_debs: over the 40 MiB budget" >&2
  exit 1
fi
