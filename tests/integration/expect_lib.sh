# Checks of a command's exit code and output (sourced; needs fail() from the sourcing test).

# expect RC PATTERN CMD...: runs CMD, checks its exit code and that stdout+stderr match PATTERN.
expect() {
  local want_rc=$1 pattern=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  [ "$rc" -eq "$want_rc" ] || fail "$* exited $rc, want $want_rc: $out"
  grep -qE -- "$pattern" <<< "$out" || fail "$* output lacks /$pattern/: $out"
}
# one_line_error CMD...: exit 2 and exactly one line on stderr, nothing on stdout.
one_line_error() {
  local err out rc
  out=$("$@" 2>/tmp/cli_err.$$); rc=$?; err=$(cat /tmp/cli_err.$$); rm -f /tmp/cli_err.$$
  [ "$rc" -eq 2 ] || fail "$* exited $rc, want 2"
  [ -z "$out" ] || fail "$* wrote to stdout: $out"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "$* stderr is not one line: $err"
  echo "$err" | grep -q "error: " || fail "$* stderr lacks 'error: ': $err"
}
