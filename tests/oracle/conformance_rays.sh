#!/bin/sh
# Ray hits ("hits") of skinnerd against ray_reference.mjs on Babylon.js's skinned triangles
# (issue 33): Fox, CesiumMan, skin_mirror and skin_morph, the rest pose and two clips at four
# times, 48 rays a pose (conformance_rays.mjs).
#
#   tests/oracle/conformance_rays.sh [SKINNERD [TESTS_DIR]]
#
# In make check SKINNERD and SK_TEST_DATA come from the environment. Installs the pinned
# Babylon into tests/oracle/node_modules first if it is missing. Exit 77 (skipped) when
# node or the pinned Babylon is not available, or when this skinnerd does not know "hits".
set -u

here=$(cd "$(dirname "$0")" && pwd)
skinnerd=${SKINNERD:-}
tests=${SK_TEST_DATA:-$here/..}
case ${1:-} in --* | "") ;; *) skinnerd=$1; shift ;; esac
case ${1:-} in --* | "") ;; *) tests=$1; shift ;; esac
if [ -z "$skinnerd" ] || [ ! -x "$skinnerd" ]; then
    echo "usage: $0 [SKINNERD [TESTS_DIR]] (or SKINNERD in the environment)" >&2
    exit 2
fi
if ! command -v node >/dev/null 2>&1; then
    echo "conformance-rays: SKIP: node is required (Node.js 20 or later)"
    exit 77
fi
if [ ! -f "$here/node_modules/@babylonjs/core/package.json" ]; then
    echo "conformance-rays: installing the pinned Babylon.js into $here/node_modules"
    (cd "$here" && npm install --no-audit --no-fund --loglevel=error) >&2 || {
        echo "conformance-rays: SKIP: npm install failed (no registry?)"
        exit 77
    }
fi
exec node "$here/conformance_rays.mjs" "$skinnerd" "$tests" "$@"
