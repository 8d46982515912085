#!/bin/sh
# Skinned vertices, normals and bounds of skinnerd against Babylon.js, bit for bit
# (issue 33): Fox, CesiumMan, RiggedFigure, RobotExpressive, mannequiny and the generated
# skin_morph, skin_8inf and skin_mirror, every clip at many times, through /pose, /poses,
# "times" and "from"/"to"/"fps" ranges (conformance_mesh.mjs).
#
#   tests/oracle/conformance_mesh.sh [SKINNERD [TESTS_DIR]] [--quick | --full] [--asset NAME.glb]...
#
# make check runs every asset and clip except that meshes over 5000 vertices (mannequiny)
# take their first 3 clips; --full takes every clip, --quick 2 clips and fewer times.
# In make check SKINNERD and SK_TEST_DATA come from the environment. Installs the pinned
# Babylon into tests/oracle/node_modules first if it is missing. Exit 77 (skipped) when
# node or the pinned Babylon is not available, or when this skinnerd does not know the
# "vertices" output yet.
set -u

here=$(cd "$(dirname "$0")" && pwd)
skinnerd=${SKINNERD:-}
tests=${SK_TEST_DATA:-$here/..}
case ${1:-} in --* | "") ;; *) skinnerd=$1; shift ;; esac
case ${1:-} in --* | "") ;; *) tests=$1; shift ;; esac
if [ -z "$skinnerd" ] || [ ! -x "$skinnerd" ]; then
    echo "usage: $0 [SKINNERD [TESTS_DIR]] [--quick | --full] [--asset NAME.glb]... (or SKINNERD in the environment)" >&2
    exit 2
fi
if ! command -v node >/dev/null 2>&1; then
    echo "conformance-mesh: SKIP: node is required (Node.js 20 or later)"
    exit 77
fi
if [ ! -f "$here/node_modules/@babylonjs/core/package.json" ]; then
    echo "conformance-mesh: installing the pinned Babylon.js into $here/node_modules"
    (cd "$here" && npm install --no-audit --no-fund --loglevel=error) >&2 || {
        echo "conformance-mesh: SKIP: npm install failed (no registry?)"
        exit 77
    }
fi
exec node "$here/conformance_mesh.mjs" "$skinnerd" "$tests" "$@"
