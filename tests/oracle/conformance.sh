#!/bin/sh
# Random conformance run of `skinner eval` against real Babylon.js.
#
#   tests/oracle/conformance.sh SKINNER_BINARY [SEED] [COUNT]
#
# Generates COUNT (default 200) cases with SEED (default: time based, printed),
# computes the expected results with Babylon (babylon_eval.mjs), runs
# `SKINNER_BINARY eval CASE.json` on each case and compares (compare.mjs).
# Installs the pinned @babylonjs/core into tests/oracle/node_modules first if
# it is missing. Exits nonzero on any failure and then keeps the work
# directory (cases, expected and actual outputs) for inspection.
#
# SKINNER_EVAL_STDIN=1 feeds each case on stdin instead of as a file argument.

set -eu

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
    echo "usage: $0 SKINNER_BINARY [SEED] [COUNT]" >&2
    exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
case $1 in
    /*) skinner=$1 ;;
    *) skinner=$(pwd)/$1 ;;
esac
seed=${2:-}
count=${3:-200}

if [ ! -x "$skinner" ]; then
    echo "conformance: $1 is not an executable" >&2
    exit 2
fi
if [ -z "$seed" ]; then
    seed=$(( $(date +%s) % 4294967296 ))
fi
case $seed$count in
    *[!0-9]*)
        echo "conformance: SEED and COUNT must be non-negative integers" >&2
        exit 2
        ;;
esac
if ! command -v node >/dev/null 2>&1; then
    echo "conformance: node is required (Node.js 20 or later)" >&2
    exit 2
fi

if [ ! -f "$here/node_modules/@babylonjs/core/package.json" ]; then
    echo "conformance: installing @babylonjs/core into $here/node_modules"
    (cd "$here" && npm install --no-audit --no-fund --loglevel=error) >&2
fi

echo "conformance: seed $seed, $count cases (rerun: $0 $1 $seed $count)"

work=$(mktemp -d "${TMPDIR:-/tmp}/skinner-conformance.XXXXXX")
keep=0
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [ "$keep" = 0 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

node "$here/gen_cases.mjs" --seed "$seed" --count "$count" --named >"$work/cases.jsonl" 2>"$work/gen.err" || {
    keep=1
    cat "$work/gen.err" >&2
    echo "conformance: case generation failed; see $work" >&2
    exit 1
}
node "$here/babylon_eval.mjs" --jsonl "$work/cases.jsonl" "$work/expected.jsonl" 2>"$work/babylon.err" || {
    keep=1
    cat "$work/babylon.err" >&2
    echo "conformance: Babylon could not evaluate the cases; see $work" >&2
    exit 1
}

# One bare case per file, named by position, as `skinner eval` reads it.
mkdir "$work/cases" "$work/actual"
# shellcheck disable=SC2016 # JavaScript, not shell
node -e '
const fs = require("fs");
const [src, dir] = process.argv.slice(1);
fs.readFileSync(src, "utf8").split("\n").filter((l) => l.trim()).forEach((l, k) => {
    fs.writeFileSync(`${dir}/${String(k).padStart(5, "0")}.json`, JSON.stringify(JSON.parse(l).case) + "\n");
});' "$work/cases.jsonl" "$work/cases"

for f in "$work"/cases/*.json; do
    [ -e "$f" ] || continue
    b=$(basename "$f" .json)
    if [ "${SKINNER_EVAL_STDIN:-0}" = 1 ]; then
        "$skinner" eval <"$f" >"$work/actual/$b.json" 2>"$work/actual/$b.err" || true
    else
        "$skinner" eval "$f" >"$work/actual/$b.json" 2>"$work/actual/$b.err" || true
    fi
done

if node "$here/compare.mjs" "$work/expected.jsonl" "$work/actual"; then
    exit 0
fi
keep=1
echo "conformance: inputs and outputs kept in $work" >&2
exit 1
