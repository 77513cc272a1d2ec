#!/usr/bin/env bash
# Clang's thread-safety analysis over every C++ target whose sources use Abseil's lock
# annotations (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED, ABSL_LOCKS_EXCLUDED, ... or an
# absl::Mutex): builds them with clang and -Wthread-safety -Werror=thread-safety. gcc, the
# project's compiler, ignores the annotations. The same clang build runs Bazel's layering_check
# (.bazelrc turns it on; gcc's toolchain has no such feature) over every target it compiles.
#
#   scripts/thread_safety_check.sh            # from anywhere in the checkout
#
# Uses its own Bazel output base (THREAD_SAFETY_OUTPUT_BASE, default /tmp/bazel_clang) so the
# gcc build's cache is untouched; its server exits after 10 idle minutes. Prints one line:
#   thread-safety: ok (N targets, S s)
# or the analysis errors (or the build's last lines) and then "thread-safety: FAILED ...";
# exit status 0 or 1 (2 when clang is missing).
set -uo pipefail

cd "$(dirname "$0")/.."
output_base="${THREAD_SAFETY_OUTPUT_BASE:-/tmp/bazel_clang}"
started=$(date +%s)

if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null; then
  echo "thread-safety: FAILED: clang/clang++ not found (apt-get install clang)"
  exit 2
fi

# Source files with annotations, outside Bazel's output symlinks.
pattern='ABSL_(PT_)?GUARDED_BY|ABSL_(EXCLUSIVE|SHARED)_LOCKS_REQUIRED|ABSL_LOCKS_EXCLUDED|ABSL_(EXCLUSIVE_|SHARED_)?(ACQUIRE|RELEASE)|absl::Mutex'
mapfile -t files < <(find . -path './bazel-*' -prune -o -path './.git' -prune -o \
                       \( -name '*.h' -o -name '*.cc' \) -type f -print |
                     xargs grep -lE "$pattern" | sed 's|^\./||' | sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "thread-safety: ok (no annotated sources)"
  exit 0
fi

# Each file as a label of its package (the nearest folder above it with a BUILD.bazel).
labels=()
for f in "${files[@]}"; do
  dir=$(dirname "$f")
  while [ "$dir" != "." ] && [ ! -f "$dir/BUILD.bazel" ]; do dir=$(dirname "$dir"); done
  if [ "$dir" = "." ]; then
    labels+=("//:$f")
  else
    labels+=("//$dir:${f#"$dir"/}")
  fi
done

bazel_clang() {
  CC=clang CXX=clang++ bazel --output_base="$output_base" --max_idle_secs=600 "$@"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The rules that compile those files (the targets named after them, by house style).
if ! targets=$(bazel_clang query --keep_going \
                 "kind('cc_(library|binary|test)', same_pkg_direct_rdeps(set(${labels[*]})))" \
                 2>"$log"); then
  tail -n 20 "$log"
  echo "thread-safety: FAILED: bazel query for the annotated targets failed"
  exit 1
fi
mapfile -t targets < <(printf '%s\n' "$targets" | sed '/^$/d')
if [ "${#targets[@]}" -eq 0 ]; then
  echo "thread-safety: FAILED: no Bazel target compiles ${files[*]}"
  exit 1
fi

if bazel_clang build --keep_going --copt=-Wthread-safety --copt=-Werror=thread-safety \
     "${targets[@]}" >"$log" 2>&1; then
  echo "thread-safety: ok (${#targets[@]} targets, $(( $(date +%s) - started )) s)"
  exit 0
fi
if grep -q 'Wthread-safety' "$log"; then
  grep -E -A3 'error: .*\[-Werror,-Wthread-safety' "$log"
else
  tail -n 30 "$log"
fi
echo "thread-safety: FAILED ($(grep -c 'error: .*Wthread-safety' "$log") analysis errors in" \
     "${#targets[@]} targets, $(( $(date +%s) - started )) s)"
exit 1
