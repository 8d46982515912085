#!/bin/sh
# proto/openapi.yaml read by common tools: `swagger-cli validate` and
# Redocly's lint (recommended-strict, tests/openapi/redocly.yaml), both
# pinned by tests/openapi/package-lock.json, on the file and on the copy
# skinnerd serves at /openapi.yaml (its schemas/ references resolved
# against the daemon). Skipped, visibly, with 77 when node or
# tests/openapi/node_modules is missing (`./setup test` installs them).
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
bin="$here/openapi/node_modules/.bin"
command -v node >/dev/null 2>&1 || { echo "SKIP: openapi_lint: no node (apt-get install nodejs)"; exit 77; }
[ -x "$bin/swagger-cli" ] && [ -x "$bin/redocly" ] ||
  { echo "SKIP: openapi_lint: no tests/openapi/node_modules (cd tests/openapi && npm ci)"; exit 77; }
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
skinnerd=${SKINNERD:-$top/skinnerd}
passed=0 failed=0
check() { # name command...
  name=$1
  shift
  if out=$("$@" 2>&1); then
    passed=$((passed + 1))
    echo "ok - $name"
  else
    failed=$((failed + 1))
    echo "FAIL - $name"
    echo "$out" | tail -n 30
  fi
}
check "swagger-cli validate proto/openapi.yaml" "$bin/swagger-cli" validate "$top/proto/openapi.yaml"
check "redocly lint proto/openapi.yaml" "$bin/redocly" lint --config "$here/openapi/redocly.yaml" "$top/proto/openapi.yaml"

log=$(mktemp)
"$skinnerd" --listen 127.0.0.1:0 >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ':[0-9]' "$log" && break; sleep 0.05; done
port=$(head -n 1 "$log" | sed 's/.*://')
check "swagger-cli validate http://127.0.0.1:PORT/openapi.yaml (the daemon's copy)" \
  "$bin/swagger-cli" validate "http://127.0.0.1:$port/openapi.yaml"
kill -TERM "$pid"
wait "$pid"
rm -f "$log"
echo "openapi_lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
