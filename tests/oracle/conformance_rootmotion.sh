#!/bin/sh
# Root motion against Babylon 9.34 in Node, generated cases (issue 34).
#
#   tests/oracle/conformance_rootmotion.sh [CHECK_ROOTMOTION TESTS_DIR [SEED] [COUNT]]
#
# In make check (no arguments): ./tests/check_rootmotion and $SK_TEST_DATA.
# 1. Regenerates the committed answers (gen_rootmotion.sh's cases, and
#    gen_rootframes.sh's per-frame ones) into a temporary directory: they
#    must be Babylon's bytes still.
# 2. Draws COUNT (default 12) option sets with SEED (default: time based,
#    printed) over Fox, CesiumMan and mannequiny, has Babylon answer each
#    (babylon_rootmotion.mjs), and runs CHECK_ROOTMOTION (tests/check_rootmotion)
#    on them with SK_RM_CASES: every number equal (==).
# Exit 77 (skipped) without node or the pinned Babylon (npm install in tests/oracle).
set -eu
check=$(cd "$(dirname "${1:-./tests/check_rootmotion}")" && pwd)/$(basename "${1:-check_rootmotion}")
tests=$(cd "${2:-${SK_TEST_DATA:-tests}}" && pwd)
seed=${3:-$(( $(date +%s) % 4294967296 ))}
count=${4:-12}
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 && [ -d "$here/node_modules/@babylonjs/core" ] || { echo "no node or Babylon: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "conformance_rootmotion: seed $seed, $count cases"
d=$tests/data
cd "$here"
node babylon_rootmotion.mjs $d/Fox.glb > $tmp/Fox.json
node babylon_rootmotion.mjs $d/mannequiny-0.3.0.glb > $tmp/mq.json
cmp $tmp/Fox.json $d/rootmotion/Fox.json && cmp $tmp/mq.json $d/rootmotion/mannequiny-0.3.0.json
# the per-frame answers tests/rootframes.py checks (controller driven per frame)
sh ./gen_rootframes.sh $tmp/rf
for f in $d/rootframes/*.json; do cmp $tmp/rf/$(basename $f) $f; done
cases=""
i=0
while [ $i -lt $count ]; do
    opts=$(node -e '
let s = (Number(process.argv[1]) + 7919 * Number(process.argv[2])) >>> 0;
const r = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
const o = {};
if (r() < 0.3) o.source = r() < 0.5 ? 1 : 2;
if (r() < 0.4) o.extractRotation = r() < 0.5;
if (r() < 0.5) o.samplesPerSecond = [15, 24, 30, 60, 90, 120][Math.floor(r() * 6)];
if (r() < 0.4) o.minimumTravel = Math.round(r() * 300) / 1000;
if (r() < 0.3) o.minimumTurn = Math.round(r() * 500) / 1000;
if (r() < 0.4) o.directionSnapAngle = Math.round(r() * 600) / 1000;
if (r() < 0.4) o.extractLateralMotion = r() < 0.5;
process.stdout.write(JSON.stringify(o));' "$seed" "$i")
    case $((i % 3)) in 0) glb=Fox.glb ;; 1) glb=CesiumMan.glb ;; *) glb=mannequiny-0.3.0.glb ;; esac
    node babylon_rootmotion.mjs "$d/$glb" "$opts" > "$tmp/case$i.json"
    cases="$cases data/$glb:$tmp/case$i.json"
    i=$((i + 1))
done
cd "$tests"
SK_RM_CASES="$cases" "$check"
