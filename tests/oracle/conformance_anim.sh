#!/bin/sh
# Random conformance run of Babylon-format clips (issue 14) against real
# Babylon.js, through every path.
#
#   tests/oracle/conformance_anim.sh SKINNER SKINNERD TESTS_DIR [SEED] [COUNT]
#
# Draws COUNT (default 200) clip cases and COUNT*3/10 copyAnimationRange
# cases with gen_banim.mjs and SEED (default: time based, printed), then
# weighted layers over their skeletons with gen_banim_layers.py and
# crossfades ("blendIn") with gen_banim_blendin.py (same seed);
# Babylon answers both (babylon_eval.mjs). tests/skinnerd_bone_api.py then
# runs each case through `SKINNER eval` (Babylon's numbers, float32 bit for
# bit) and through a SKINNERD on a free loopback port: /pose and /poses give
# skinner eval's bytes and Babylon's numbers. Installs the pinned Babylon
# first if needed. Keeps the cases on failure.
set -eu

if [ $# -lt 3 ] || [ $# -gt 5 ]; then
    echo "usage: $0 SKINNER SKINNERD TESTS_DIR [SEED] [COUNT]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
skinner=$1
skinnerd=$2
tests=$3
seed=${4:-}
count=${5:-200}
if [ -z "$seed" ]; then
    seed=$(( $(date +%s) % 4294967296 ))
fi
case $seed$count in
    *[!0-9]*)
        echo "conformance-anim: SEED and COUNT must be non-negative integers" >&2
        exit 2
        ;;
esac
if [ ! -f "$here/node_modules/@babylonjs/core/package.json" ]; then
    (cd "$here" && npm install --no-audit --no-fund --loglevel=error) >&2
fi
echo "conformance-anim: seed $seed, $count cases (rerun: $0 $1 $2 $3 $seed $count)"
work=$(mktemp -d "${TMPDIR:-/tmp}/skinner-conformance-anim.XXXXXX")
node "$here/gen_banim.mjs" --seed "$seed" --count "$count" --retarget $((count * 3 / 10)) 2>"$work/gen.err" |
    node "$here/babylon_eval.mjs" --jsonl - "$work/anim.jsonl" 2>"$work/babylon.err" &&
    python3 "$here/gen_banim_layers.py" "$work/anim.jsonl" "$seed" 2>>"$work/gen.err" |
    node "$here/babylon_eval.mjs" --jsonl - "$work/layers.jsonl" 2>>"$work/babylon.err" &&
    python3 "$here/gen_banim_blendin.py" "$work/anim.jsonl" "$tests/conformance/banim_fox.jsonl" "$seed" \
        2>>"$work/gen.err" |
    node "$here/babylon_eval.mjs" --jsonl - "$work/blendin.jsonl" 2>>"$work/babylon.err" || {
    cat "$work/gen.err" "$work/babylon.err" >&2
    echo "conformance-anim: generation failed; see $work" >&2
    exit 1
}
if SKINNER=$skinner SKINNERD=$skinnerd SK_TEST_DATA=$tests \
    python3 "$tests/skinnerd_bone_api.py" --anim "$work/anim.jsonl" --anim "$work/layers.jsonl" \
        --anim "$work/blendin.jsonl"; then
    rm -rf "$work"
    exit 0
fi
echo "conformance-anim: cases kept in $work" >&2
exit 1
