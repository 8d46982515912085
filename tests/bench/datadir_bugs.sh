#!/bin/bash
# The data-directory cases of issue 11, against one build, with curl:
#   tests/bench/datadir_bugs.sh ./skinnerd
# (docs/history/data-dir.md has the before/after table these printed). The tmpfs
# cases need root (unshare -m, nsenter); they are skipped otherwise.
set -u
X=$(realpath "$1"); D=$(mktemp -d); B=; P=; PORT=
J='-H Content-Type:application/json'; S='{"bones":[{"name":"r"}]}'
startd() {
  "$X" --listen 127.0.0.1:0 --data-dir "$D/data" >"$D/out" 2>"$D/err" & P=$!
  for _ in $(seq 50); do grep -q listening "$D/out" 2>/dev/null && break; sleep 0.1; done
  PORT=$(head -1 "$D/out" | sed -n 's/^listening on .*://p'); B=http://127.0.0.1:$PORT
}
stopd() { kill "$P" 2>/dev/null; wait "$P" 2>/dev/null; : >"$D/out"; }
code() { curl -s -o "$D/body" -w '%{http_code}' "$@"; echo " $(head -c 200 "$D/body")"; }
big=$(python3 -c 'import json;print(json.dumps({"bones":[{"name":"r"}]+[{"name":"b%d"%i,"parent":"r"} for i in range(100)]}))')

startd
echo "PUT .tmp-alpha: $(code $J -XPUT "$B/v1/skeletons/.tmp-alpha" -d "$S")"
echo "PUT a%00zzz: $(code $J -XPUT "$B/v1/skeletons/a%00zzz" -d "$S")"
"$X" --listen 127.0.0.1:0 --data-dir "$D/data" >"$D/out2" 2>"$D/err2" & P2=$!; sleep 1
if kill -0 $P2 2>/dev/null; then echo "second daemon: running"; kill $P2; wait $P2
else wait $P2; echo "second daemon: exit $?: $(cat "$D/err2")"; fi
prlimit --pid "$P" --fsize=16384:
echo "PUT past RLIMIT_FSIZE 16 KiB: $(code $J -XPUT "$B/v1/skeletons/big" -d "$big")"
echo "readyz: $(code "$B/readyz")"
kill -0 "$P" 2>/dev/null || echo "the daemon died"
prlimit --pid "$P" --fsize=unlimited: 2>/dev/null
stopd; startd
echo "after a restart, GET .tmp-alpha: $(code "$B/v1/skeletons/.tmp-alpha")"
stopd
mkfifo "$D/data/x.rec"
t0=$(date +%s%N); startd; t1=$(date +%s%N)
if grep -q listening "$D/out"; then echo "start-up with a FIFO x.rec: $(( (t1 - t0) / 1000000 )) ms; $(cat "$D/err")"; stopd
else echo "start-up with a FIFO x.rec: no 'listening' line after 5 s"; kill -9 "$P"; wait "$P" 2>/dev/null; fi
rm -rf "$D/data"; mkdir "$D/data"

if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs '$D/data' && exec '$X' --listen 127.0.0.1:0 --data-dir '$D/data'" \
    >"$D/out" 2>"$D/err" & P=$!
  for _ in $(seq 50); do grep -q listening "$D/out" 2>/dev/null && break; sleep 0.1; done
  B=http://127.0.0.1:$(head -1 "$D/out" | sed 's/.*://')
  mid=$(python3 -c 'import json;print(json.dumps({"bones":[{"name":"r"}]+[{"name":"b%d"%i,"parent":"r"} for i in range(40)]}))')
  for i in $(seq 10); do c=$(curl -s -o "$D/body" -w '%{http_code}' $J -XPUT "$B/v1/skeletons/s$i" -d "$mid"); [ "$c" != 201 ] && break; done
  echo "PUT s$i on a full 64 KiB tmpfs: $c $(head -c 200 "$D/body")"
  echo "readyz: $(code "$B/readyz")"
  curl -s -o /dev/null -XDELETE "$B/v1/skeletons/s1"
  if nsenter -t "$P" -m mount -o remount,ro "$D/data" 2>"$D/mnt"; then
    echo "remount ro: PUT $(code $J -XPUT "$B/v1/skeletons/s2" -d "$S"); DELETE $(code -XDELETE "$B/v1/skeletons/s2")"
  else echo "remount ro refused: $(head -1 "$D/mnt")"; fi
  kill "$P"; wait "$P" 2>/dev/null
fi
rm -rf "$D"
