#!/usr/bin/env bash
# `hpo report` end to end (manual: bazel test //tests/integration:report_screenshot_test). A
# synthetic dev-mode sweep keeps its HTML report beside its journal; `hpo report` writes the same
# page elsewhere; the page has a row per trial and references nothing outside itself; bad input
# exits 2; and headless Chromium renders the page to a non-trivial PNG (skipped, saying so, on a
# machine without chromium: apt-get install chromium).  Args: hpo binary.
HPO=$1
source tests/integration/lib.sh

J="$WORK/run/journal.log"
out=$("$HPO" sweep configs/synthetic.yaml --journal "$J" 2>"$WORK/stderr.txt"); rc=$?
[ "$rc" -eq 0 ] || { fail "hpo sweep exited $rc: $(tail -5 "$WORK/stderr.txt")"; finish; }
[ -s "$WORK/run/journal.html" ] || fail "hpo sweep wrote no report beside its journal"
echo "$out" | grep -qx "report: $WORK/run/journal.html" || fail "the sweep's summary does not name its report"

start=$(date +%s.%N)
"$HPO" report --journal "$J" --output "$WORK/report.html" >"$WORK/report.txt" 2>&1 ||
  fail "hpo report failed: $(cat "$WORK/report.txt")"
echo "hpo report took $(echo "$(date +%s.%N) - $start" | bc) s: $(cat "$WORK/report.txt")"
n=$(pyq "$J" 'len(T)')
grep -qx "report: $WORK/report.html ($n trials)" "$WORK/report.txt" || fail "unexpected output: $(cat "$WORK/report.txt")"
cmp -s "$WORK/report.html" "$WORK/run/journal.html" || fail "the sweep's page differs from hpo report's"
for ((i = 0; i < n; i++)); do
  grep -q "<tr id=\"trial-$i\"" "$WORK/report.html" || fail "no row for trial $i"
done
grep -q '://' "$WORK/report.html" && fail "the page holds a URL: $(grep -o '.\{20\}://.\{20\}' "$WORK/report.html" | head -1)"
grep -Eiq '<script|<link|<img|<iframe|@import|src=|url\([^#]' "$WORK/report.html" &&
  fail "the page loads something: $(grep -Eio '<script|<link|<img|<iframe|@import|src=|url\([^#]' "$WORK/report.html" | head -3)"
grep -q 'id="timeline"' "$WORK/report.html" || fail "no timeline"
echo "page: $(stat -c %s "$WORK/report.html") bytes, $n trials"

# Bad input: one line on stderr, exit 2; --help works.
"$HPO" report --journal "$WORK/missing.log" >/dev/null 2>"$WORK/err.txt"; rc=$?
[ "$rc" -eq 2 ] || fail "a missing journal: exit $rc, want 2"
[ "$(wc -l <"$WORK/err.txt")" -eq 1 ] || fail "a missing journal: want one error line, got: $(cat "$WORK/err.txt")"
"$HPO" report >/dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] || fail "no journal named: exit $rc, want 2"
"$HPO" report --help | grep -q -- '--output' || fail "hpo report --help names no --output"

CHROMIUM=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROMIUM" ]; then
  echo "SKIPPED the screenshot: no chromium on this machine (apt-get install chromium)"
  finish
fi
start=$(date +%s.%N)
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$WORK/chromium" --screenshot="$WORK/report.png" --window-size=1280,2600 \
  "file://$WORK/report.html" >"$WORK/chromium.txt" 2>&1 || fail "chromium failed: $(tail -3 "$WORK/chromium.txt")"
size=$(stat -c %s "$WORK/report.png" 2>/dev/null || echo 0)
echo "chromium rendered it in $(echo "$(date +%s.%N) - $start" | bc) s: ${size}-byte PNG"
[ "$(head -c 4 "$WORK/report.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = "89504e47" ] ||
  fail "no PNG written ($CHROMIUM said: $(tail -3 "$WORK/chromium.txt" | tr '\n' ' '))"
[ "$size" -gt 20480 ] || fail "the screenshot is only $size bytes: an empty page?"
finish
