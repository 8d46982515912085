#!/bin/sh
# The man pages: mandoc finds nothing to warn about, and every option that
# `skinnerd --help` and `skinner --help` print is documented in its page
# (so a new flag cannot ship without its man-page entry).
# Prints "man_pages: N passed, N failed".
top=$(cd "$(dirname "$0")/.." && pwd)
SKINNERD=${SKINNERD:-$top/skinnerd}
SKINNER=${SKINNER:-$top/skinner}
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

if ! command -v mandoc >/dev/null 2>&1; then
  echo "man_pages: SKIP (mandoc is not installed; ./setup deps installs it)"
  exit 77
fi
for page in "$top/man/skinnerd.8" "$top/man/skinner.1"; do
  out=$(mandoc -T lint -W warning "$page" 2>&1)
  if [ -z "$out" ]; then ok "mandoc lint $(basename "$page")"; else bad "mandoc lint $(basename "$page"): $out"; fi
done
check_flags() { # binary page
  text=$(mandoc -T ascii "$2" | sed 's/.\x08//g') # drop the overstrikes of bold and underline
  for flag in $("$1" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    if printf '%s\n' "$text" | grep -q -- "$flag"; then ok "$(basename "$2") documents $flag"
    else bad "$(basename "$2") does not document $flag"; fi
  done
}
check_flags "$SKINNERD" "$top/man/skinnerd.8"
check_flags "$SKINNER" "$top/man/skinner.1"
echo "man_pages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
