# Helpers for the end-to-end tests (sourced). They run the real binaries: hpo starts a real head
# and agent, which start real trainer processes; everything lives under a private temp folder.
set -uo pipefail
PY=/usr/bin/python3  # Debian's python3, which has optuna 3.1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
finish() {
  if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
  echo "all checks passed"
}
WORK=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tf-e2e-XXXXXX")
# Each test's own runtime root (common/runtime_dir.h): agents' locks and sockets, the head's
# default socket; tests running at once never meet there. In /tmp: a Unix socket's path holds
# at most 107 bytes, which the test's own folder may exceed.
export XDG_RUNTIME_DIR=$(mktemp -d /tmp/tf-xdg-XXXXXX)
RUNTIME="$XDG_RUNTIME_DIR/tunefleet"
# The test's home: agents serve trial folders under $HOME (launcher/trial_guard.h), as under a
# user's home; Bazel runs tests without one.
export HOME="$WORK"
cleanup() {
  # Only processes this test started: those whose command line names its private folder.
  for pid in $(pgrep -f "$WORK" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  # bazel test --test_env=TF_KEEP_WORK=1 keeps the test's folder for a look afterwards.
  [ -n "${TF_KEEP_WORK:-}" ] && { echo "kept $WORK"; return; }
  rm -rf "$WORK" "$XDG_RUNTIME_DIR"
}
trap cleanup EXIT

# wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds.
wait_for() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

# no_leftovers: no process of this test is still running (head, agent, trainers).
no_leftovers() { [ -z "$(pgrep -f "$WORK" 2>/dev/null)" ]; }

# status_json JOURNAL: hpo's view of the journal.
status_json() { "$HPO" status --journal "$1" --format json; }

# jq-like one-liners over hpo's JSON view: pyq JOURNAL 'python expression over `s` (the view)'.
pyq() {
  status_json "$1" | "$PY" -c "import json,sys; s=json.load(sys.stdin); T=s['trials']; print($2)"
}
