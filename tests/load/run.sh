#!/bin/sh
# Load and soak test of skinnerd (issue 7); `make load` runs it. Not part of
# `make check`. Needs wrk (`./setup load` installs it) and python3.
#   DURATION=20 tests/load/run.sh       shorter runs (default 60 s each)
# Other knobs (WARMUP, LOAD_CONNECTIONS, LOAD_WRK_THREADS, RSS_TOLERANCE,
# SCENARIOS, LINGER, SKINNERD) are described in tests/load/load.py.
set -eu
here=$(dirname "$0")
command -v wrk >/dev/null 2>&1 || { echo "load: wrk not found (./setup load installs it)" >&2; exit 2; }
exec python3 "$here/load.py" "$@"
