#!/usr/bin/env bash
# Runs pruner_differential_test.py under Debian's python3, which has Optuna 3.1 and numpy.
# Args: path of the script, path of pruner_replay_tool.
set -euo pipefail
exec /usr/bin/python3 "$1" "$2"
