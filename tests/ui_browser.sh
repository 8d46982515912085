#!/bin/sh
# The preview page in headless chromium against Babylon.js renders
# (tests/ui/browser_test.mjs). Skipped, visibly, with automake's 77 when
# chromium, node or the test's npm packages (./setup deps installs them all)
# are missing.
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}
skip() { echo "SKIP: ui_browser: $1"; exit 77; }
[ -x "$chromium" ] || skip "no chromium at $chromium (apt-get install chromium)"
command -v node >/dev/null 2>&1 || skip "no node (apt-get install nodejs)"
[ -d "$here/ui/node_modules/puppeteer-core" ] && [ -d "$here/ui/node_modules/babylonjs-loaders" ] ||
  skip "no tests/ui/node_modules (cd tests/ui && npm ci)"
export CHROMIUM="$chromium"
export UI_TEST_OUT="${UI_TEST_OUT:-$(pwd)/tests/ui_browser.out}"
echo "ui_browser: screenshots in $UI_TEST_OUT"
exec node "$here/ui/browser_test.mjs"
