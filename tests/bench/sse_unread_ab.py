#!/usr/bin/env python3
"""Two skinnerd builds side by side, in one run, on event streams nobody reads.

  python3 tests/bench/sse_unread_ab.py OLD_SKINNERD NEW_SKINNERD [ROUNDS] [STREAMS]

For each build, alternating (OLD, NEW, OLD, NEW...): STREAMS (200) event
streams of Fox's Walk at 1000 fps from clients that set a 4 KiB receive
buffer and never read; over the first 6 s, the daemon's CPU (share of one
core), then /healthz p50 of 20 probes and the bytes the kernel queues on
the daemon's sockets (ss Send-Q). Medians per build; ratios come from the
same run. Run from the top of the tree (tests/data/Fox.glb)."""
import os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import stream_sse as t  # noqa: E402


def run(binary, n):
    p = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--max-per-ip", "0", "--memory-mb", "64"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(p.stdout.readline().strip().rsplit(":", 1)[1])
    d = t.Daemon.__new__(t.Daemon)
    d.port, d.p = port, p
    with open("tests/data/Fox.glb", "rb") as f:
        d.req("PUT", "/v1/skeletons/fox", f.read(), headers={"Content-Type": "model/gltf-binary"})
    socks = [t.open_raw(port, "/v1/skeletons/fox/stream?animation=Walk&fps=1000&frames=0,10000000")
             for _ in range(n)]
    c0 = t.cpu_s(p.pid)
    time.sleep(6)
    share = (t.cpu_s(p.pid) - c0) / 6
    h = t.healthz_p50(port)
    out = subprocess.run(["ss", "-tn", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True).stdout
    queued = sum(int(l.split()[1]) for l in out.splitlines()[1:] if l.split())
    for s in socks:
        s.close()
    p.terminate()
    p.wait()
    return share * 100, h, queued / 1e6


def main():
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    res = {old: [], new: []}
    for _ in range(rounds):
        for b in (old, new):
            res[b].append(run(b, n))
            print("%s: CPU %.1f%% of a core, /healthz p50 %.2f ms, %.1f MB queued" % ((b,) + res[b][-1]), flush=True)
    for b in (old, new):
        m = [statistics.median(x[i] for x in res[b]) for i in range(3)]
        print("median %s: CPU %.1f%%, /healthz p50 %.2f ms, %.1f MB queued in the kernel" % (b, *m))


if __name__ == "__main__":
    main()
