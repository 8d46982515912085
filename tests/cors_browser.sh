#!/bin/sh
# CORS in headless chromium: a page of another origin edits a skeleton
# through fetch() (tests/ui/cors_test.mjs). Skipped, visibly, with
# automake's 77 when chromium, node or puppeteer-core (./setup deps
# installs them all) are missing.
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}
skip() { echo "SKIP: cors_browser: $1"; exit 77; }
[ -x "$chromium" ] || skip "no chromium at $chromium (apt-get install chromium)"
command -v node >/dev/null 2>&1 || skip "no node (apt-get install nodejs)"
[ -d "$here/ui/node_modules/puppeteer-core" ] || skip "no tests/ui/node_modules (cd tests/ui && npm ci)"
export CHROMIUM="$chromium"
exec node "$here/ui/cors_test.mjs"
