#!/bin/sh
# Builds the Debian package (dpkg-buildpackage -b on a copy of the tree, so
# the tree's own in-place build is not cleaned), lints it, installs it, runs
# skinnerd as the packaged unit does, stores a skeleton, sends one pose, then
# stops and removes it. Run by `./setup test` after make check.
#
# Where it installs: as root with systemd running, `dpkg -i` and the real
# units (the socket moved to a free port by a runtime drop-in); as root
# without systemd, `dpkg -i` (postinst creates the user and /var/lib/skinnerd)
# and the unit's ExecStart under systemd-socket-activate as user skinnerd;
# otherwise (or when a skinnerd package is already installed, which this
# never touches, or with SK_DEB_EXTRACT=1) extracted into a throwaway root.
# Then purged.
# Exit 77 (skipped) without dpkg-buildpackage and debhelper.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
for tool in dpkg-buildpackage dh lintian curl python3 systemd-socket-activate; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
tmp=$(mktemp -d)
pid="" mode="" dropin="" made_user=0
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  case "$mode" in
    systemd|dpkg)
      dpkg --purge skinnerd >/dev/null 2>&1
      [ "$made_user" = 1 ] && deluser --system skinnerd >/dev/null 2>&1
      ;;
  esac
  if [ -n "$dropin" ]; then rm -rf "$dropin"; systemctl daemon-reload; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The tree's files (tracked and new, not ignored), or what `make distdir` ships.
mkdir -p "$tmp/src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$top" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$tmp/src"
else
  make -C "$top" distdir distdir="$tmp/src" >/dev/null && cp -R "$top/debian" "$tmp/src/"
fi
start=$(date +%s)
if (cd "$tmp/src" && dpkg-buildpackage -b -us -uc -j"$(nproc 2>/dev/null || echo 2)") > "$tmp/build.log" 2>&1; then
  ok "dpkg-buildpackage -b -us -uc in $(($(date +%s) - start)) s"
else
  tail -40 "$tmp/build.log"; bad "dpkg-buildpackage (log above)"
  echo "tests/deb_package.sh: $pass passed, $fail failed"; exit 1
fi
deb=$(ls "$tmp"/skinnerd_*.deb)
if lintian --fail-on error,warning "$tmp"/skinnerd_*.changes > "$tmp/lintian.log" 2>&1; then
  ok "lintian (no errors or warnings)"
else
  cat "$tmp/lintian.log"; bad "lintian"
fi
dpkg-deb -c "$deb" > "$tmp/contents"
for f in usr/bin/skinnerd usr/bin/skinner usr/share/man/man8/skinnerd.8.gz usr/share/man/man1/skinner.1.gz \
         lib/systemd/system/skinnerd.service lib/systemd/system/skinnerd.socket \
         lib/systemd/system/skinnerd.service.d/debian.conf etc/default/skinnerd; do
  grep -q " \./$f\$" "$tmp/contents" && ok "ships /$f" || bad "/$f missing from the package"
done

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
if [ "$(id -u)" -eq 0 ] && [ "${SK_DEB_EXTRACT:-0}" != 1 ] && ! dpkg-query -W skinnerd >/dev/null 2>&1; then
  getent passwd skinnerd >/dev/null || made_user=1
  if [ -d /run/systemd/system ]; then
    mode=systemd
    dropin=/run/systemd/system/skinnerd.socket.d
    mkdir -p "$dropin"
    printf '[Socket]\nListenStream=\nListenStream=127.0.0.1:%s\n' "$port" > "$dropin/test.conf"
  else
    mode=dpkg
  fi
  if dpkg -i "$deb" > "$tmp/dpkg.log" 2>&1; then ok "dpkg -i ($mode)"; else cat "$tmp/dpkg.log"; bad "dpkg -i"; fi
  getent passwd skinnerd >/dev/null && ok "postinst created user skinnerd" || bad "no user skinnerd"
  [ "$(stat -c %U:%a /var/lib/skinnerd 2>/dev/null)" = skinnerd:700 ] && ok "/var/lib/skinnerd skinnerd:700" ||
    bad "/var/lib/skinnerd is $(stat -c %U:%a /var/lib/skinnerd 2>&1)"
  root="" state=/var/lib/skinnerd
else
  mode=extract
  root="$tmp/root" state="$tmp/state"
  dpkg-deb -x "$deb" "$root" && mkdir -p "$state" && ok "dpkg-deb -x into a throwaway root"
fi

if [ "$mode" = systemd ]; then
  # postinst started both units, the socket on the drop-in's port already.
  systemctl start skinnerd.socket && systemctl is-active --quiet skinnerd.socket && ok "skinnerd.socket active" ||
    bad "skinnerd.socket did not start"
else
  # The unit's ExecStart and the drop-in's EnvironmentFile, as systemd would
  # run them behind skinnerd.socket (its port moved to a free one).
  exec_start=$(sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/skinnerd.service" |
    sed -e "s|\${STATE_DIRECTORY}|$state|g" -e "s|^/usr/bin/|$root/usr/bin/|")
  grep -q '^EnvironmentFile=-/etc/default/skinnerd$' "$root/lib/systemd/system/skinnerd.service.d/debian.conf" &&
    ok "drop-in reads /etc/default/skinnerd" || bad "drop-in lacks EnvironmentFile"
  set -a; . "$root/etc/default/skinnerd"; set +a
  as=""
  [ "$mode" = dpkg ] && as="setpriv --reuid=skinnerd --regid=skinnerd --init-groups"
  # shellcheck disable=SC2086 # exec_start is the unit's command line, split as systemd splits it
  $as systemd-socket-activate -l "127.0.0.1:$port" $exec_start > "$tmp/daemon.log" 2>&1 &
  pid=$!
fi

up=0
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null 2>&1 && { up=1; break; }; sleep 0.1; done
if [ "$up" = 1 ]; then
  ok "GET /healthz"
else
  bad "the daemon did not answer /healthz"
  if [ "$mode" = systemd ]; then journalctl -u skinnerd --no-pager | tail -20; else cat "$tmp/daemon.log"; fi
fi
code=$(curl -s -o "$tmp/put.json" -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
  --data-binary @"$top/proto/examples/skeleton-babylon-page.json" "$base/v1/skeletons/page")
case "$code" in 200|201) ok "PUT /v1/skeletons/page: $code" ;; *) bad "PUT: $code $(cat "$tmp/put.json")" ;; esac
code=$(curl -s -o "$tmp/pose.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  -d '{"bones":{"armLeft":{"rotation":[0,0,1.309]}}}' "$base/v1/skeletons/page/pose")
# Four bones, 16 numbers each: armLeft (bone 1) at 75 degrees about z over its
# rest pose at 30 gives a final matrix starting cos(45 degrees).
n=$(python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["final"]; print(len(f), round(f[16], 4))' "$tmp/pose.json" 2>/dev/null)
if [ "$code" = 200 ] && [ "$n" = "64 0.7071" ]; then ok "POST .../pose: 200, 4 bone matrices"; else bad "pose: $code $(cat "$tmp/pose.json")"; fi
[ -n "$(ls -A "$state" 2>/dev/null)" ] && ok "the skeleton persisted in $state" || bad "$state is empty"

if [ "$mode" = systemd ]; then
  systemctl stop skinnerd.socket skinnerd.service && ok "systemctl stop" || bad "systemctl stop"
elif [ -n "$pid" ]; then
  kill -TERM "$pid"; wait "$pid"; st=$?; pid=""
  [ "$st" = 0 ] && ok "SIGTERM: exit 0" || { bad "SIGTERM: exit $st"; cat "$tmp/daemon.log"; }
fi
if [ "$mode" = systemd ] || [ "$mode" = dpkg ]; then
  mode_was=$mode mode=""
  if dpkg --purge skinnerd > "$tmp/purge.log" 2>&1 && [ ! -e /var/lib/skinnerd ] && [ ! -e /usr/bin/skinnerd ]; then
    ok "dpkg --purge ($mode_was)"
  else
    cat "$tmp/purge.log"; bad "dpkg --purge left files"
  fi
  [ "$made_user" = 1 ] && deluser --system skinnerd >/dev/null 2>&1
  made_user=0
fi
echo "tests/deb_package.sh: $pass passed, $fail failed"
[ "$fail" = 0 ]
