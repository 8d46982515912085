#!/bin/sh
# Random conformance run of the Bone API ops (issue 13) against real Babylon.js.
#
#   tests/oracle/conformance_ops.sh CHECK_SK_OPS_BINARY TESTS_DIR [SEED] [COUNT]
#
# Draws COUNT (default 300) cases with gen_ops.mjs and SEED (default: time
# based, printed), and COUNT more with --mirror 1, computes Babylon's answers
# (babylon_eval.mjs) and runs the check_sk_ops suite on them (SK_OPS_FILE):
# every number bit for bit, the
# Euler read-back included. Then tests/skinnerd_bone_api.py poses every
# case that fits one pose request through a skinnerd on a free loopback
# port, /pose and /poses: skinner eval's bytes and Babylon's numbers. The
# binaries are $SKINNER and $SKINNERD, by default skinner and skinnerd one
# directory above CHECK_SK_OPS_BINARY (the build tree). Installs the pinned
# Babylon first if needed. Keeps the cases on failure.
set -eu

if [ $# -lt 2 ] || [ $# -gt 4 ]; then
    echo "usage: $0 CHECK_SK_OPS_BINARY TESTS_DIR [SEED] [COUNT]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
check=$1
tests=$2
seed=${3:-}
count=${4:-300}
if [ -z "$seed" ]; then
    seed=$(( $(date +%s) % 4294967296 ))
fi
case $seed$count in
    *[!0-9]*)
        echo "conformance-ops: SEED and COUNT must be non-negative integers" >&2
        exit 2
        ;;
esac
if [ ! -f "$here/node_modules/@babylonjs/core/package.json" ]; then
    (cd "$here" && npm install --no-audit --no-fund --loglevel=error) >&2
fi
echo "conformance-ops: seed $seed, $count cases (rerun: $0 $1 $2 $seed $count)"
work=$(mktemp -d "${TMPDIR:-/tmp}/skinner-conformance-ops.XXXXXX")
# COUNT cases as drawn by default, and COUNT more with --mirror 1 (mirrored
# and non-uniform mesh chains, world rotations, ik on leaves of length 0).
for m in 0 1; do
    node "$here/gen_ops.mjs" --seed "$seed" --count "$count" --named --mirror $m 2>"$work/gen.err" |
        node "$here/babylon_eval.mjs" --jsonl - "$work/ops$m.jsonl" 2>"$work/babylon.err" || {
        cat "$work/gen.err" "$work/babylon.err" >&2
        echo "conformance-ops: generation failed; see $work" >&2
        exit 1
    }
done
top=$(cd "$(dirname "$check")/.." && pwd)
ok=1
for m in 0 1; do
    SK_TEST_DATA=$tests SK_OPS_FILE="$work/ops$m.jsonl" CK_RUN_CASE=babylon "$check" || ok=0
done
# the daemon's paths run even when the offline one failed: both verdicts
SKINNER=${SKINNER:-$top/skinner} SKINNERD=${SKINNERD:-$top/skinnerd} SK_TEST_DATA=$tests \
    python3 "$tests/skinnerd_bone_api.py" --ops "$work/ops0.jsonl" --ops "$work/ops1.jsonl" || ok=0
if [ "$ok" = 1 ]; then
    rm -rf "$work"
    exit 0
fi
echo "conformance-ops: cases kept in $work/ops0.jsonl and $work/ops1.jsonl (--mirror 1)" >&2
exit 1
