#!/usr/bin/env python3
"""Two skinnerd builds side by side, in one run, on what the loop thread does.

  python3 tests/bench/loop_ab.py OLD_SKINNERD NEW_SKINNERD [ROUNDS]

For each build, alternating (OLD, NEW, OLD, NEW...):
  - stream: the best time of 15 answers of a 1024-pose mannequiny batch
    (6.6 MB of JSON, streamed) and of a 601-frame range, binary and JSON:
    the answer path's throughput (sk_http__run_mhd's passes);
  - put: 9 PUTs of mannequiny (1.9 MB glTF) with --data-dir, and the
    loop's iterations meanwhile, from /metrics
    (skinnerd_loop_iteration_seconds and _cpu_seconds): where the record
    is written (sk_cache_stage).
Ratios come from the same run, never from figures of another day."""
import http.client, os, re, shutil, socket, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ASSET = os.path.join(HERE, "..", "data", "mannequiny-0.3.0.glb")


def start(exe, extra):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([exe, "--listen", "127.0.0.1:%d" % port, "--max-body", "8388608"] + extra,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            c.request("GET", "/healthz")
            c.getresponse().read()
            return p, c
        except OSError:
            time.sleep(0.05)
    raise SystemExit("%s did not start" % exe)


def stream(exe, body):
    p, c = start(exe, [])
    c.request("PUT", "/v1/skeletons/a", body, {"Content-Type": "model/gltf-binary"})
    c.getresponse().read()
    item = '{"animation":0,"time":0.25,"loop":false,"output":["final"]}'
    cases = [("1024-pose JSON batch", "/v1/skeletons/a/poses", '{"poses":[' + ",".join([item] * 1024) + "]}", {}),
             ("601-frame range, binary", "/v1/skeletons/a/pose", '{"animation":0,"from":0,"to":10,"fps":60}',
              {"Accept": "application/octet-stream"}),
             ("601-frame range, JSON", "/v1/skeletons/a/pose", '{"animation":0,"from":0,"to":10,"fps":60}', {})]
    out = {}
    for name, path, b, h in cases:
        best, n = 1e9, 0
        for _ in range(15):
            t = time.perf_counter()
            c.request("POST", path, b, dict(h, **{"Content-Type": "application/json"}))
            r = c.getresponse()
            n = len(r.read())
            best = min(best, time.perf_counter() - t)
        out[name] = (best, n)
    p.terminate()
    p.wait()
    return out


def hist(c):
    c.request("GET", "/metrics")
    t = c.getresponse().read().decode()
    return {k: [(float(b) if b != "+Inf" else float("inf"), int(v))
                for b, v in re.findall(r'skinnerd_loop_iteration_%s_bucket\{le="([^"]+)"\} (\d+)' % k, t)]
            for k in ("seconds", "cpu_seconds")}


def longest(h0, h1):
    """The bucket bound (ms) every iteration between the two stayed under."""
    for (b, v0), (_, v1) in zip(h0, h1):
        if h1[-1][1] - v1 == h0[-1][1] - v0:
            return b * 1e3
    return float("inf")


def put(exe, body):
    d = tempfile.mkdtemp()
    try:
        p, c = start(exe, ["--data-dir", d])
        h0 = hist(c)
        for i in range(9):
            c.request("PUT", "/v1/skeletons/k%d" % (i % 3), body, {"Content-Type": "model/gltf-binary"})
            c.getresponse().read()
        h1 = hist(c)
        p.terminate()
        p.wait()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return longest(h0["seconds"], h1["seconds"]), longest(h0["cpu_seconds"], h1["cpu_seconds"])


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    body = open(ASSET, "rb").read()
    best = {}
    for _ in range(rounds):
        for label, exe in (("old", old), ("new", new)):
            for name, (t, n) in stream(exe, body).items():
                prev = best.get((label, name))
                best[(label, name)] = (min(t, prev[0]) if prev else t, n)
            w, cpu = put(exe, body)
            print("put  %s: 9 x 1.9 MB with --data-dir: loop iterations <= %g ms (CPU <= %g ms)" % (label, w, cpu))
    for name in ("1024-pose JSON batch", "601-frame range, binary", "601-frame range, JSON"):
        (to, n), (tn, _) = best[("old", name)], best[("new", name)]
        print("stream %-24s %9d bytes: old %.1f ms, new %.1f ms, new/old %.2f" % (name, n, to * 1e3, tn * 1e3,
                                                                                   tn / to))


if __name__ == "__main__":
    main()
