#!/bin/sh
# The preview page's pure modules (ui/mat.js, ui/glb.js, ui/timing.js,
# ui/servermesh.js) under node
# (tests/ui/unit.mjs); skipped, visibly, with 77 when node is missing.
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 || { echo "SKIP: ui_unit: no node (apt-get install nodejs)"; exit 77; }
exec node "$here/ui/unit.mjs"
