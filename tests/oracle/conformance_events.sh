#!/bin/sh
# AnimationEvents against Babylon 9.34 in Node, generated cases.
#
#   tests/oracle/conformance_events.sh [SKINNER TESTS_DIR [SEED] [COUNT]]
#
# In make check (no arguments): $SKINNER and $SK_TEST_DATA.
# 1. Regenerates the committed cases (tests/conformance/events.jsonl, seed
#    34, 40 cases) into a temporary file: they must be Babylon's bytes still
#    (check_sk_eventframes replays them without Node).
# 2. Draws COUNT (default 40) more with SEED (default: time based, printed),
#    and COUNT / 2 glTF clips with markers (babylon_events_gltf.mjs: Fox,
#    CesiumMan, RobotExpressive copies with animations[i].extras.markers),
#    and has skinner eval answer all (compare_events.mjs): every pose's
#    events the ones Babylon fired, in its order, frames ==.
# Exit 77 (skipped) without node or the pinned Babylon (npm install in tests/oracle).
set -eu
skinner=$(cd "$(dirname "${1:-${SKINNER:-./skinner}}")" && pwd)/$(basename "${1:-${SKINNER:-skinner}}")
tests=$(cd "${2:-${SK_TEST_DATA:-tests}}" && pwd)
seed=${3:-$(( $(date +%s) % 4294967296 ))}
count=${4:-40}
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 && [ -d "$here/node_modules/@babylonjs/core" ] || { echo "no node or Babylon: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "conformance_events: seed $seed, $count cases"
cd "$here"
node babylon_events.mjs 34 40 > "$tmp/committed.jsonl"
cmp "$tmp/committed.jsonl" "$tests/conformance/events.jsonl"
node babylon_events.mjs "$seed" "$count" > "$tmp/drawn.jsonl"
node compare_events.mjs "$tests/conformance/events.jsonl" "$skinner"
node compare_events.mjs "$tmp/drawn.jsonl" "$skinner"
node babylon_events_gltf.mjs "$tmp" "$seed" $((count / 2)) > "$tmp/gltf.jsonl"
node compare_events.mjs "$tmp/gltf.jsonl" "$skinner"
