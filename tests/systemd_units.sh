#!/bin/sh
# The shipped units pass `systemd-analyze verify`, and the service's
# hardening scores "OK" or better in `systemd-analyze security`.
set -u
: "${SK_TEST_DATA:=tests}" "${SKINNERD:=./skinnerd}"
top="$SK_TEST_DATA/.."
command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: systemd-analyze is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bindir=$(cd "$(dirname "$SKINNERD")" && pwd)
sed -e "s|@bindir@|$bindir|g" -e "s|@docdir@|$tmp|g" "$top/systemd/skinnerd.service.in" > "$tmp/skinnerd.service"
cp "$top/systemd/skinnerd.socket" "$tmp/"
pass=0 fail=0
if systemd-analyze verify "$tmp/skinnerd.service" "$tmp/skinnerd.socket" > "$tmp/verify.log" 2>&1 && ! grep -q . "$tmp/verify.log"; then
  pass=$((pass + 1))
else
  echo "FAIL: systemd-analyze verify:"; cat "$tmp/verify.log"; fail=$((fail + 1))
fi
level=$(systemd-analyze security --offline=yes "$tmp/skinnerd.service" 2>/dev/null | sed -n 's/.*Overall exposure level for skinnerd.service: \([0-9.]*\).*/\1/p')
if [ -n "$level" ] && awk "BEGIN { exit !($level <= 2.0) }"; then
  pass=$((pass + 1))
else
  echo "FAIL: systemd-analyze security exposure is '${level:-unknown}', want <= 2.0"; fail=$((fail + 1))
fi
for key in Type=notify DynamicUser=yes StateDirectory=skinnerd ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
           NoNewPrivileges=yes RestrictAddressFamilies= SystemCallFilter=@system-service MemoryDenyWriteExecute=yes WatchdogSec=; do
  if grep -q "^$key" "$tmp/skinnerd.service"; then pass=$((pass + 1)); else echo "FAIL: $key missing"; fail=$((fail + 1)); fi
done
# Issue 11: resource ceilings and reload in the unit; the credentials drop-in verifies too.
for key in MemoryMax= TasksMax= ExecReload=; do
  if grep -q "^$key" "$tmp/skinnerd.service"; then pass=$((pass + 1)); else echo "FAIL: $key missing"; fail=$((fail + 1)); fi
done
mkdir -p "$tmp/skinnerd.service.d"
cp "$top/systemd/skinnerd-access.conf" "$tmp/skinnerd.service.d/access.conf"
if systemd-analyze verify "$tmp/skinnerd.service" "$tmp/skinnerd.socket" > "$tmp/verify2.log" 2>&1 && ! grep -q . "$tmp/verify2.log"; then
  pass=$((pass + 1))
else
  echo "FAIL: systemd-analyze verify with skinnerd-access.conf:"; cat "$tmp/verify2.log"; fail=$((fail + 1))
fi
echo "systemd_units: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
