#!/usr/bin/env bash
# scripts/house_check.py on a planted tree: an include of a header that is not a direct dep, an
# include of an undeclared project header, a 501-line file, an 81-line *_main.cc, a main() of 81
# lines and a function of 81 lines (outside tests/; one in tests/ and a braced string of
# 90 lines are not functions to split) are each reported with their file and line, and the same
# tree without them passes.
#   house_check_test.sh HOUSE_CHECK_PY
set -uo pipefail
check=$1
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/house.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$T/a" "$T/b" "$T/c"
cat > "$T/a/BUILD.bazel" <<'B'
cc_library(name = "x", srcs = ["x.cc"], hdrs = ["x.h"], visibility = ["//visibility:public"])
cc_library(name = "y", srcs = ["y.cc"], hdrs = ["y.h"], deps = [":x"],
           visibility = ["//visibility:public"])
B
echo '#pragma once' > "$T/a/x.h"; echo '#include "a/x.h"' > "$T/a/x.cc"
echo '#include "a/x.h"' > "$T/a/y.h"; echo '#include "a/y.h"' > "$T/a/y.cc"
cat > "$T/b/BUILD.bazel" <<'B'
cc_library(name = "z", srcs = ["z.cc"], hdrs = ["z.h"], deps = ["//a:y"])
cc_binary(name = "tool", srcs = ["tool_main.cc"], deps = [":z"])
B
printf '#pragma once\n#include "a/y.h"\n' > "$T/b/z.h"
printf '#include "b/z.h"\n#include <vector>\n' > "$T/b/z.cc"
printf '#include "b/z.h"\nint main() { return 0; }\n' > "$T/b/tool_main.cc"
# A function of n lines, signature to closing brace (a namespace, a comment with a brace and a
# raw string with braces around it).
function_of() {
  echo 'namespace q {'; echo "// } not code {"; echo "int F$1(int a,"; echo "       int b) {"
  for i in $(seq $(($1 - 4))); do echo "  a += b;  // {"; done
  echo '  const char* s = R"({)";'; echo '}'; echo '}  // namespace q'
}
function_of 80 > "$T/a/y.cc"
mkdir -p "$T/tests"; function_of 120 > "$T/tests/long_test.cc"

out=$(python3 "$check" --root "$T") || fail "a clean tree failed: $out"
grep -q "house check: ok" <<<"$out" || fail "no ok line: $out"

# Plant each violation.
printf '#pragma once\n#include "a/x.h"\n' > "$T/b/z.h"             # x is not b:z's direct dep
echo '#include "c/loose.h"' >> "$T/b/z.cc"; echo '#pragma once' > "$T/c/loose.h"
{ echo '#include "a/x.h"'; for i in $(seq 500); do echo "// $i"; done; } > "$T/a/x.cc"
{ echo '#include "b/z.h"'; echo 'int main() {'; for i in $(seq 80); do echo "  // $i"; done
  echo '}'; } > "$T/b/tool_main.cc"
function_of 81 > "$T/a/y.cc"

out=$(python3 "$check" --root "$T") && fail "the planted tree passed: $out"
want=(
  "b/z.h:2: //b:z includes a/x.h of //a:x, not a direct dep"
  "b/z.cc:3: includes c/loose.h, which no target declares in hdrs"
  "a/x.cc:501: 501 lines; the limit is 500"
  "b/tool_main.cc:81: a main file of 83 lines; the limit is 80"
  "b/tool_main.cc: main() has 82 lines; the limit is 80"
  "a/y.cc:3: F81() has 81 lines; the limit is 80"
  "house check: 6 problem(s)"
)
for w in "${want[@]}"; do
  grep -qF -- "$w" <<<"$out" || fail "missing '$w' in: $out"
done
echo "PASS"
