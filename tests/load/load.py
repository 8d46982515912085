#!/usr/bin/env python3
"""Load and soak test of skinnerd (issue 7): `make load` or tests/load/run.sh.

Not part of `make check`: it saturates both cores for a few minutes. Loopback
only; every daemon it starts listens on 127.0.0.1 on a free port and is
stopped at exit. Python standard library and wrk only.

For each scenario, wrk (LOAD_WRK_THREADS threads, LOAD_CONNECTIONS
connections, tests/load/load.lua) POSTs one body at saturation against a
65-bone skeleton: first WARMUP seconds, then DURATION seconds. A scenario
passes when the measured run has zero socket errors (connect, read, write,
timeout), zero non-2xx answers, every answer the expected length, and the
daemon's RSS after the run at most RSS_TOLERANCE percent over its RSS after
the warm-up (less is fine: memory given back). Scenarios:
  pose-json     one pose, JSON answer
  pose-binary   one pose, application/octet-stream answer
  batch64       64 poses, application/octet-stream answer
Then, unless LINGER=0, the soak check behind a libmicrohttpd 0.9.75 quirk:
200 clients that send half an upload and close at once; a FIN that lands in
the same burst as body bytes is missed, so some connections sit in
CLOSE-WAIT; all must be gone within the 30 s idle timeout (+10 s), and the
daemon must answer normally meanwhile.

Environment (defaults in brackets): SKINNERD [./skinnerd], DURATION [60],
WARMUP [10], LOAD_CONNECTIONS [64], LOAD_WRK_THREADS [2],
RSS_TOLERANCE [5], SCENARIOS [pose-json pose-binary batch64], LINGER [1].
Closing line: "load: N passed, N failed".
"""

import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BONES = 65
BATCH = 64


def env_int(name, default):
    v = os.environ.get(name, "")
    return int(v) if v.strip() else default


def start_daemon(exe, extra=()):
    # Every client here is 127.0.0.1 (wrk, then 200 aborted uploads and a
    # health check): over the default --max-per-ip 128 on purpose.
    p = subprocess.Popen([exe, "--listen", "127.0.0.1:0", "--log-level", "error", "--max-per-ip", "1024", *extra],
                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    line = p.stdout.readline().decode().strip()
    if not line.startswith("listening on "):
        p.kill()
        raise SystemExit("load: skinnerd did not start (%r)" % line)
    return p, int(line.rsplit(":", 1)[1])


def stop_daemon(p):
    p.terminate()
    try:
        return p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait()


def request(port, method, path, body=None, headers=None):
    """One HTTP/1.1 exchange on a fresh connection; (status, headers, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    hdrs = {"Host": "127.0.0.1", "Connection": "close"}
    hdrs.update(headers or {})
    if body is not None:
        hdrs["Content-Length"] = str(len(body))
    head = "%s %s HTTP/1.1\r\n%s\r\n" % (method, path, "".join("%s: %s\r\n" % kv for kv in hdrs.items()))
    s.sendall(head.encode() + (body or b""))
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, head.decode("latin-1"), rest


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def skeleton():
    """65 bones: a spine of 9 and 7 limbs of 8, deterministic TRS."""
    bones, seed = [], 12345
    for i in range(BONES):
        v = []
        for _ in range(4):
            seed = (seed * 1103515245 + 12345) % 2**32
            v.append(((seed >> 8) % 2000) / 1000.0 - 1.0)
        b = {"name": "bone%d" % i,
             "position": [v[0] * 0.3, v[1] * 0.3 + 0.2, v[2] * 0.3],
             "rotation": [v[1], v[2], v[3]]}
        if i > 0:
            b["parent"] = "bone%d" % (i - 1 if i < 9 else ((i - 9) // 8 + 1 if (i - 9) % 8 == 0 else i - 1))
        bones.append(b)
    return {"bones": bones}


def pose(k):
    b1, b2 = k % BONES, (k * 7 + 3) % BONES
    if b2 == b1:
        b2 = (b2 + 1) % BONES
    return {"bones": {"bone%d" % b1: {"rotation": [0.01 * k, -0.02 * k, 0.5]},
                      "bone%d" % b2: {"position": [0, 0.001 * k, 0]}},
            "initialSkinMatrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.25, 0, 0, 1]}


def run_wrk(url, body_path, accept, expect_len, seconds, conns, threads):
    env = dict(os.environ, LOAD_BODY=body_path, LOAD_ACCEPT=accept, LOAD_EXPECT_LEN=str(expect_len))
    cmd = ["wrk", "-t%d" % threads, "-c%d" % conns, "-d%ds" % seconds, "--latency", "-s",
           os.path.join(HERE, "load.lua"), url]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    out = {}
    for line in r.stdout.splitlines():
        if line.startswith("load_"):
            key, _, val = line.partition(" ")
            out[key] = val if key == "load_errors_detail" else float(val)
    if r.returncode != 0 or "load_requests" not in out:
        raise SystemExit("load: wrk failed (%s):\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return out


def main():
    exe = os.environ.get("SKINNERD", "./skinnerd")
    duration = env_int("DURATION", 60)
    warmup = env_int("WARMUP", 10)
    conns = env_int("LOAD_CONNECTIONS", 64)
    threads = env_int("LOAD_WRK_THREADS", 2)
    tolerance = float(os.environ.get("RSS_TOLERANCE", "5"))
    wanted = os.environ.get("SCENARIOS", "pose-json pose-binary batch64").split()
    passed = failed = 0

    def verdict(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
        print("%s: %s" % ("PASS" if ok else "FAIL", what), flush=True)

    tmp = tempfile.mkdtemp(prefix="skinnerd-load-")
    daemon, port = start_daemon(exe)
    try:
        st, _, body = request(port, "PUT", "/v1/skeletons/load", json.dumps(skeleton()).encode(),
                              {"Content-Type": "application/json"})
        if st not in (200, 201):
            raise SystemExit("load: PUT skeleton: %d %s" % (st, body[:200]))
        files = {}
        for name, doc in (("pose", pose(3)), ("batch64", {"poses": [pose(k) for k in range(BATCH)]})):
            files[name] = os.path.join(tmp, name + ".json")
            with open(files[name], "wb") as f:
                f.write(json.dumps(doc, separators=(",", ":")).encode())
        one = 16 * (BONES + 1) * 4
        scenarios = {
            "pose-json": ("/v1/skeletons/load/pose", "pose", "application/json"),
            "pose-binary": ("/v1/skeletons/load/pose", "pose", "application/octet-stream"),
            "batch64": ("/v1/skeletons/load/poses", "batch64", "application/octet-stream"),
        }
        print("# skinnerd %s, pid %d, 127.0.0.1:%d; wrk -t%d -c%d, warm-up %d s, run %d s per scenario; "
              "%d CPUs" % (exe, daemon.pid, port, threads, conns, warmup, duration, os.cpu_count()), flush=True)
        for name in wanted:
            if name not in scenarios:
                raise SystemExit("load: unknown scenario %s (have %s)" % (name, " ".join(scenarios)))
            path, body_name, accept = scenarios[name]
            with open(files[body_name], "rb") as f:
                st, _, ans = request(port, "POST", path, f.read(),
                                     {"Content-Type": "application/json", "Accept": accept})
            if st != 200:
                raise SystemExit("load: %s: %d %s" % (name, st, ans[:200]))
            want_len = len(ans)
            if accept != "application/json":
                assert want_len == one * (BATCH if body_name == "batch64" else 1), want_len
            url = "http://127.0.0.1:%d%s" % (port, path)
            w = run_wrk(url, files[body_name], accept, want_len, warmup, conns, threads)
            time.sleep(0.5)
            rss_warm = rss_kb(daemon.pid)
            r = run_wrk(url, files[body_name], accept, want_len, duration, conns, threads)
            time.sleep(0.5)
            rss_after = rss_kb(daemon.pid)
            rps = r["load_requests"] / (r["load_duration_us"] / 1e6)
            growth = 100.0 * (rss_after - rss_warm) / rss_warm
            poses_s = rps * (BATCH if body_name == "batch64" else 1)
            print("%-12s %9.0f req/s (%8.0f poses/s)  p50 %6.2f ms  p99 %6.2f ms  p99.9 %6.2f ms  max %6.1f ms  "
                  "requests %d  socket errors %d  non-2xx %d  wrong length %d  RSS warm %d kB -> after %d kB (%+.1f %%)"
                  % (name, rps, poses_s, r["load_p50_us"] / 1e3, r["load_p99_us"] / 1e3, r["load_p99.9_us"] / 1e3,
                     r["load_max_us"] / 1e3, r["load_requests"], r["load_socket_errors"], r["load_non2xx"],
                     r["load_badlen"], rss_warm, rss_after, growth), flush=True)
            if r["load_socket_errors"]:
                print("  socket errors: %s" % r["load_errors_detail"])
            verdict(w["load_socket_errors"] == 0 and w["load_non2xx"] == 0 and w["load_badlen"] == 0,
                    "%s warm-up: no socket error, no non-2xx, every answer %d bytes" % (name, want_len))
            verdict(r["load_socket_errors"] == 0, "%s: zero socket errors" % name)
            verdict(r["load_non2xx"] == 0 and r["load_badlen"] == 0,
                    "%s: zero non-2xx answers, every answer %d bytes" % (name, want_len))
            # Only growth counts: a smaller RSS after the run is memory given back.
            verdict(growth <= tolerance, "%s: RSS after the run at most %g %% over RSS after the warm-up"
                    % (name, tolerance))
        st, _, _ = request(port, "GET", "/healthz")
        verdict(st == 200, "healthz after the load")
        if os.environ.get("LINGER", "1") != "0":
            base = fd_count(daemon.pid)
            for _ in range(200):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(b"POST /v1/skeletons/load/poses HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 102400\r\n\r\n" + b" " * 10240)
                s.close()
            time.sleep(0.5)
            stuck = fd_count(daemon.pid) - base
            st, _, _ = request(port, "GET", "/healthz")
            t0 = time.monotonic()
            while fd_count(daemon.pid) > base and time.monotonic() - t0 < 40:
                time.sleep(0.5)
            left = fd_count(daemon.pid) - base
            print("aborted uploads: 200 clients closed mid-body; %d connections left in CLOSE-WAIT, all closed "
                  "%.0f s later (%d still open)" % (max(stuck, 0), time.monotonic() - t0, max(left, 0)), flush=True)
            verdict(st == 200, "healthz answered while connections lingered")
            verdict(left <= 0, "lingering connections closed within the idle timeout (+10 s)")
    finally:
        code = stop_daemon(daemon)
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    verdict(code == 0, "skinnerd exited 0 after SIGTERM")
    print("load: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
