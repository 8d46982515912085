#!/usr/bin/env python3
"""Start-up cost of a data directory: stores N skeletons of B bones (a chain)
through the API, stops the daemon, then times start-ups on the same
directory (from exec to the "listening on" line: every record is read,
checked and decoded before the daemon listens) and reports the records'
size on disk.

    tests/bench/datadir_load.py [--skinnerd ./skinnerd] [-n 1000] [-b 100] [--runs 5]
                                [--writer OTHER_SKINNERD] [--glb FILE] [--baseline OTHER_SKINNERD]

--writer stores the records with another build (say, one that writes an
older record version) and times --skinnerd starting on them. --glb stores
N copies of a glTF binary instead of chains of B bones (heavy records:
the file is kept in each). --baseline times another build's start-ups on
the same directory, alternating with --skinnerd's, and prints the ratio of
the medians (new / baseline), so both see the same machine.

Not a `make check` test: the figures go in docs/history/data-dir.md."""
import argparse
import http.client
import json
import os
import shutil
import subprocess
import tempfile
import time


def start(exe, data_dir):
    t0 = time.monotonic()
    p = subprocess.Popen([exe, "--listen", "127.0.0.1:0", "--data-dir", data_dir, "--cache-mb", "4096"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = p.stdout.readline().decode()
    elapsed = time.monotonic() - t0
    if not line.startswith("listening on "):
        p.kill()
        raise SystemExit("skinnerd did not start: %r" % line)
    return p, int(line.rsplit(":", 1)[1]), elapsed


def stop(p):
    p.terminate()
    p.wait(timeout=30)


def chain(bones):
    b = [{"name": "b0"}]
    b += [{"name": "b%d" % i, "parent": "b%d" % (i - 1), "position": [0, 1, 0], "rotation": [0.01 * i, 0, 0]}
          for i in range(1, bones)]
    return json.dumps({"bones": b}).encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skinnerd", default="./skinnerd")
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-b", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--writer", default=None)
    ap.add_argument("--glb", default=None)
    ap.add_argument("--baseline", default=None)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="sk_datadir_load.")
    try:
        p, port, _ = start(a.writer or a.skinnerd, d)
        if a.glb:
            with open(a.glb, "rb") as f:
                body, ctype = f.read(), "model/gltf-binary"
        else:
            body, ctype = chain(a.b), "application/json"
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        t0 = time.monotonic()
        for i in range(a.n):
            c.request("PUT", "/v1/skeletons/s%d" % i, body, {"Content-Type": ctype})
            r = c.getresponse()
            r.read()
            assert r.status == 201, r.status
        put_s = time.monotonic() - t0
        stop(p)
        recs = [f for f in os.listdir(d) if f.endswith(".rec")]
        size = sum(os.path.getsize(os.path.join(d, f)) for f in recs)
        builds = [a.skinnerd] + ([a.baseline] if a.baseline else [])
        times = {b: [] for b in builds}
        for _ in range(a.runs):
            for b in builds:
                p, port, t = start(b, d)
                times[b].append(t)
                stop(p)
        what = os.path.basename(a.glb) if a.glb else "%d bones" % a.b
        med = {}
        for b in builds:
            ts = sorted(times[b])
            med[b] = ts[len(ts) // 2]
            print("%s%s: %d records of %s: %d bytes on disk (%.0f per record); "
                  "PUT %.2f ms each (fsync'ed); start-up median %.0f ms (min %.0f, max %.0f, %d runs)"
                  % (b, " on records written by " + a.writer if a.writer else "", len(recs), what, size,
                     size / len(recs), 1000 * put_s / a.n, 1000 * med[b], 1000 * ts[0], 1000 * ts[-1], a.runs))
        if a.baseline:
            print("start-up new / baseline: %.2f" % (med[a.skinnerd] / med[a.baseline]))
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
