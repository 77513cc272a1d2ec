#!/usr/bin/env bash
# Checks every C++ file of the checkout against the house's .clang-format (docs/STYLE.md):
# prints each file that differs and exits 1. With --fix, formats them in place instead.
#   scripts/format_check.sh         # CI
#   scripts/format_check.sh --fix   # before a commit
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "format check: clang-format not found (scripts/setup.sh --tests installs it)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' 2>/dev/null ||
                     find . -name '*.cc' -o -name '*.h' -o -name '*.cu' | grep -v '/bazel-')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  echo "format check: formatted ${#files[@]} files"
  exit 0
fi
# One clang-format run over all files; each differing file is named in its warnings.
mapfile -t bad < <(clang-format --dry-run "${files[@]}" 2>&1 |
                   sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' |
                   sort -u)
for f in "${bad[@]}"; do
  echo "$f: differs from .clang-format (scripts/format_check.sh --fix)"
done
echo "format check: $([ "${#bad[@]}" -eq 0 ] && echo ok || echo "${#bad[@]} file(s) differ") (${#files[@]} files)"
[ "${#bad[@]}" -eq 0 ]
