#!/bin/sh
# clients/js against the real daemon (tests/js_client.mjs), with the
# regenerated contract types, `tsc` and dist/ compared to what is committed.
# Skipped, visibly, with 77 when node or clients/js/node_modules is missing
# (`./setup test` installs them: cd clients/js && npm ci).
here=$(cd "$(dirname "$0")" && pwd)
js="$here/../clients/js"
command -v node >/dev/null 2>&1 || { echo "SKIP: js_client: no node (apt-get install nodejs)"; exit 77; }
[ -x "$js/node_modules/.bin/tsc" ] && [ -x "$js/node_modules/.bin/openapi-typescript" ] ||
  { echo "SKIP: js_client: no clients/js/node_modules (cd clients/js && npm ci)"; exit 77; }
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
# The stream needs a global WebSocket: Node 22 has one, Node 20 behind a
# flag; without one (Node 18) the stream checks are skipped, visibly.
flags=
node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null ||
  if node --experimental-websocket -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null; then
    flags=--experimental-websocket
  fi
exec node $flags "$here/js_client.mjs"
