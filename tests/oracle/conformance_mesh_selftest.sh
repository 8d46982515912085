#!/bin/sh
# Tests conformance_mesh.mjs itself, without skinnerd's mesh outputs: fake_mesh_daemon.mjs
# answers with Babylon's own numbers (every check must pass), then with one float32 ulp
# off in each answer (it must fail and name the vertex, component and ulps); and the
# ray-hit reference's self-check.
# Exit 77 when node or the pinned Babylon is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tests=${SK_TEST_DATA:-$here/..}
if ! command -v node >/dev/null 2>&1 || [ ! -f "$here/node_modules/@babylonjs/core/package.json" ]; then
    echo "conformance-mesh-selftest: SKIP: node and tests/oracle/node_modules (npm install) are required"
    exit 77
fi
fake="$here/fake_mesh_daemon.mjs"
set -- --asset skin_morph.glb --asset skin_8inf.glb --asset skin_mirror.glb --asset RiggedFigure.glb
out=$(node "$here/conformance_mesh.mjs" "$fake" "$tests" "$@" 2>/dev/null)
rc=$?
echo "$out" | tail -1
if [ $rc -ne 0 ]; then
    echo "$out"
    echo "FAIL: Babylon's own answers do not pass conformance_mesh.mjs (exit $rc)"
    exit 1
fi
out=$(FAKE_MESH_FAULT=1 node "$here/conformance_mesh.mjs" "$fake" "$tests" --asset skin_mirror.glb 2>/dev/null)
rc=$?
echo "$out" | head -1
if [ $rc -ne 1 ] || ! echo "$out" | grep -q '^FAIL skin_mirror.glb rest pose: /meshes/0/primitives/0 positions vertex 2 y: .* 1 ulps$'; then
    echo "$out"
    echo "FAIL: an answer one ulp off is not reported (exit $rc)"
    exit 1
fi
# The ray-hit reference (ray_reference.mjs) on centroid rays of a posed mesh.
if ! node "$here/ray_reference.mjs" "$tests/data/skin_morph.glb" --animation 0 --time 0.5 --self-check 2>/dev/null; then
    echo "FAIL: ray_reference.mjs --self-check"
    exit 1
fi
echo "conformance-mesh-selftest: passed"
