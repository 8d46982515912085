#!/usr/bin/env python3
"""Two skinnerd builds on the single-pose request, side by side in one run. Not a test.

  python3 tests/bench/http_ab.py OLD_SKINNERD NEW_SKINNERD [--rounds 5] [--seconds 2]
      [--connections 32] [--min-ratio 1.0] [--batch N] [--arg ARG ...]

Both daemons run at once on 127.0.0.1 (free ports), each with the 65-bone
skeleton of http_bench.py; POST /v1/skeletons/bench65/pose with the
one-bone pose of http_bench.py, binary then JSON answer, with wrk -t1 -cN
for --seconds per round; the builds take turns (old, new, old, new...) for
--rounds rounds, so a drift of the machine's speed hits both alike. Per row:
each build's median requests/s and p99, and new/old as the median of the
paired rounds (round i of new over round i of old), with PASS when it is at
least --min-ratio, else MISS. --batch N adds a row: POST /poses with N
such poses, binary answer (http_bench.py's batch rows are N = 64). --arg
passes an argument to the new build only (repeat it: --arg=--conn-memory
--arg=8192), so one build compares with itself under two settings.
Exit status 0 either way (a bench, not a test).
"""
import argparse
import atexit
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import http_bench as hb  # noqa: E402  (skeleton, pose, wrk and server helpers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--min-ratio", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=0, metavar="N")
    ap.add_argument("--arg", action="append", default=[], metavar="ARG")
    a = ap.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("needs wrk (Debian package wrk)")
    signal.signal(signal.SIGINT, hb.on_signal)
    signal.signal(signal.SIGTERM, hb.on_signal)
    atexit.register(hb.stop_all)
    tmp = tempfile.mkdtemp(prefix="skinnerd-ab-")
    atexit.register(shutil.rmtree, tmp, True)
    log = open(os.path.join(tmp, "servers.log"), "wb")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print("# CPU: %s, %d cores; wrk -t1 -c%d -d%ds, %d alternating rounds per build, paired medians" % (
        cpu, os.cpu_count(), a.connections, a.seconds, a.rounds))
    skel = json.dumps(hb.skeleton65()).encode()
    rng = random.Random(4242)
    single = os.path.join(tmp, "pose.json")
    with open(single, "wb") as f:
        f.write(json.dumps(hb.small_pose(rng)).encode())
    batch = os.path.join(tmp, "poses.json")
    with open(batch, "wb") as f:
        f.write(json.dumps({"poses": [hb.small_pose(rng) for _ in range(a.batch)]}).encode())
    servers = []
    for label, exe, extra in (("old", a.old, []), ("new", a.new, a.arg)):
        p, port = hb.start_listening([exe, "--listen", "127.0.0.1:0"] + extra, log)
        st, _, b = hb.request(port, "PUT", "/v1/skeletons/bench65", {"Content-Type": "application/json"}, skel)
        if st not in (200, 201):
            raise SystemExit("%s: PUT of the skeleton: %d %r" % (label, st, b[:200]))
        servers.append((label, p, port))
    pose = "/v1/skeletons/bench65/pose"
    rows = [("single pose, binary", "application/octet-stream", pose, single),
            ("single pose, JSON", "application/json", pose, single)]
    if a.batch > 0:
        rows.append(("batch of %d, binary" % a.batch, "application/octet-stream", pose + "s", batch))
    print("%-20s %-4s %10s %8s %8s %10s  %s" % ("row", "", "req/s", "p50 ms", "p99 ms", "CPU us/req",
                                              "rounds req/s"))
    verdicts = []
    for label, accept, path, body in rows:
        hdrs = {"Content-Type": "application/json", "Accept": accept}
        answers = set()
        for _, _, port in servers:
            st, _, ans = hb.request(port, "POST", path, hdrs, open(body, "rb").read())
            if st != 200:
                raise SystemExit("%s: %d %r" % (label, st, ans[:200]))
            answers.add(ans)
        if len(answers) != 1:
            print("# WARNING: the two builds answer %s with different bytes" % label)
        script = hb.lua_script(tmp, "ab", "POST", body, hdrs)
        per = {s[0]: [] for s in servers}
        for rnd in range(a.rounds):
            for name, p, port in servers:
                per[name].append(hb.wrk("http://127.0.0.1:%d%s" % (port, path), script, a.seconds,
                                        a.connections, warmup=1 if rnd == 0 else 0, pid=p.pid))
        for name, _, _ in servers:
            rs = per[name]
            cpu_us = [x["cpu_us_per_req"] for x in rs if x["cpu_us_per_req"] is not None]
            print("%-20s %-4s %10.0f %8.3f %8.3f %10.2f  %s" % (
                label, name, hb.median([x["rps"] for x in rs]), hb.median([x["p50_us"] for x in rs]) / 1e3,
                hb.median([x["p99_us"] for x in rs]) / 1e3, hb.median(cpu_us) if cpu_us else float("nan"),
                " ".join("%.0f" % x["rps"] for x in rs)))
            bad = sum(x["non2xx"] + x["socket_errors"] for x in rs)
            if bad:
                print("# WARNING: %s answered %d non-2xx or socket errors" % (name, bad))
        ratio = hb.median([n["rps"] / o["rps"] for o, n in zip(per["old"], per["new"]) if o["rps"] > 0])
        cpu_old = hb.median([x["cpu_us_per_req"] for x in per["old"]])
        cpu_new = hb.median([x["cpu_us_per_req"] for x in per["new"]])
        verdicts.append((label, ratio, cpu_new / cpu_old if cpu_old else float("nan")))
        sys.stdout.flush()
    print()
    for label, ratio, cpu_ratio in verdicts:
        print("%-4s %s: new/old %.3f requests/s (median of paired rounds; target >= %.2f), CPU per request "
              "new/old %.3f" % ("PASS" if ratio >= a.min_ratio else "MISS", label, ratio, a.min_ratio, cpu_ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
