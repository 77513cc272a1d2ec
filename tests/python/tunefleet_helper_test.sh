#!/usr/bin/env bash
# python/tunefleet on Debian's python3 (tests/python/tunefleet_helper_test.py says what it checks).
exec /usr/bin/python3 "$1" python
