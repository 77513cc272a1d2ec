#!/usr/bin/env bash
# bench/search_efficiency in CI (issue 16): a checked-in table, 3 seeds, every method; its
# accounting checked against an independent computation; an older journal keyed by steps.
# Args: search_efficiency binary, table journal, the sweep, the table's own grid sweep.
set -uo pipefail
WORK="${TEST_TMPDIR:-$(mktemp -d)}/search_efficiency"
exec /usr/bin/python3 tests/bench/search_efficiency_check.py "$1" "$2" "$3" "$4" "$WORK"
