#!/usr/bin/env python3
"""Start-up cost of a data directory: stores N skeletons of B bones (a chain)
through the API, stops the daemon, then times start-ups on the same
directory (from exec to the "listening on" line: every record is read,
checked and decoded before the daemon listens) and reports the records'
size on disk.

    tests/bench/datadir_load.py [--skinnerd ./skinnerd] [-n 1000] [-b 100] [--runs 5]
                                [--writer OTHER_SKINNERD]

--writer stores the records with another build (say, one that writes an
older record version) and times --skinnerd starting on them.

Not a `make check` test: the figures go in docs/data-dir.md."""
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
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="sk_datadir_load.")
    try:
        p, port, _ = start(a.writer or a.skinnerd, d)
        body = chain(a.b)
        c = http.client.HTTPConnection("127.0.0.1", port)
        t0 = time.monotonic()
        for i in range(a.n):
            c.request("PUT", "/v1/skeletons/s%d" % i, body, {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            assert r.status == 201, r.status
        put_s = time.monotonic() - t0
        stop(p)
        recs = [f for f in os.listdir(d) if f.endswith(".rec")]
        size = sum(os.path.getsize(os.path.join(d, f)) for f in recs)
        times = []
        for _ in range(a.runs):
            p, port, t = start(a.skinnerd, d)
            times.append(t)
            stop(p)
        times.sort()
        print("%s%s: %d records of %d bones: %d bytes on disk (%.0f per record, %.1f per bone); "
              "PUT %.2f ms each (fsync'ed); start-up median %.0f ms (min %.0f, max %.0f, %d runs)"
              % (a.skinnerd, " on records written by " + a.writer if a.writer else "", len(recs), a.b, size, size / len(recs), size / len(recs) / a.b,
                 1000 * put_s / a.n, 1000 * times[len(times) // 2], 1000 * times[0], 1000 * times[-1], a.runs))
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
