#!/usr/bin/env python3
"""Connection flood against skinnerd, then /healthz latency.

  tests/load/flood.py --exe ./skinnerd [--args "--admin-listen 127.0.0.1:0"] \
      [--probe public|admin] --idle 5000 ...
starts the daemon itself (port 0) and stops it; --port PORT floods a
running one instead.

Opens IDLE connections that never send a byte, SLOW_BODY uploads (complete
headers, Content-Length 100000, then one body byte per connection every
--trickle seconds) and SLOW_HEAD clients (one header byte at a time), all
from the source addresses --src (comma list, round robin; any 127.0.0.0/8
address works on Linux loopback), waits --settle seconds, then times
--samples sequential GET /healthz on --probe-port (default: the public
port) from --probe-src, each on a fresh connection, and prints one line:
  flood: idle N slow-body N slow-head N; healthz on :PORT n K p50 X ms p99 Y ms max Z ms failed F
Used for the figures in docs/history/connections.md; not part of `make check`
(tests/check_fairness.c is the test).
"""
import argparse, resource, shlex, socket, subprocess, threading, time

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--exe", default="")
    ap.add_argument("--args", default="")
    ap.add_argument("--probe", choices=("public", "admin"), default="public")
    ap.add_argument("--probe-port", type=int, default=0)
    ap.add_argument("--idle", type=int, default=0)
    ap.add_argument("--slow-body", type=int, default=0)
    ap.add_argument("--slow-head", type=int, default=0)
    ap.add_argument("--src", default="127.0.0.1")
    ap.add_argument("--probe-src", default="127.0.0.1")
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--settle", type=float, default=2.0)
    ap.add_argument("--trickle", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    daemon = None
    if a.exe:
        daemon = subprocess.Popen([a.exe, "--listen", "127.0.0.1:0", *shlex.split(a.args)], stdout=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL)
        a.port = int(daemon.stdout.readline().decode().rsplit(":", 1)[1])
        if a.probe == "admin":
            line = daemon.stdout.readline().decode()
            if not line.startswith("admin listening on "):
                raise SystemExit("flood: no admin listener (%r)" % line)
            a.probe_port = int(line.rsplit(":", 1)[1])
    if not a.port:
        raise SystemExit("flood: --port or --exe")
    srcs = a.src.split(",")
    socks = []

    def opener(i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((srcs[i % len(srcs)], 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", a.port))
        return s

    head_slow = (b"POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 b"X-Padding: " + b"a" * 4000)
    head_body = (b"POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100000\r\n\r\n")
    n = 0
    for _ in range(a.idle):
        socks.append(("idle", opener(n), 0)); n += 1
    for _ in range(a.slow_body):
        socks.append(("body", opener(n), 0)); n += 1
    for _ in range(a.slow_head):
        socks.append(("head", opener(n), 0)); n += 1
    stop = threading.Event()

    def trickle():
        pos = {}
        first = True
        while not stop.is_set():
            for kind, s, _ in socks:
                if kind == "idle":
                    continue
                p = pos.get(s.fileno(), 0)
                try:
                    if kind == "body" and first:
                        k = s.send(head_body)
                        pos[s.fileno()] = k
                    elif kind == "body":
                        s.send(b" ")
                    else:
                        s.send(head_slow[p:p + 1]); pos[s.fileno()] = p + 1
                except OSError:
                    pass
            first = False
            stop.wait(a.trickle)

    th = threading.Thread(target=trickle, daemon=True)
    th.start()
    time.sleep(a.settle)
    port = a.probe_port or a.port
    lat, failed = [], 0
    for _ in range(a.samples):
        t0 = time.monotonic()
        try:
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.bind((a.probe_src, 0))
            c.settimeout(a.timeout)
            c.connect(("127.0.0.1", port))
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                k = c.recv(4096)
                if not k:
                    break
                data += k
            c.close()
            if not data.startswith(b"HTTP/1.1 200"):
                failed += 1
                continue
            lat.append(time.monotonic() - t0)
        except OSError:
            failed += 1
    stop.set()
    lat.sort()
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1e3 if lat else float("nan")
    print("flood: idle %d slow-body %d slow-head %d from %d address(es); healthz on %s port from %s: n %d p50 %.1f ms "
          "p99 %.1f ms max %.1f ms failed %d" % (a.idle, a.slow_body, a.slow_head, len(srcs),
                                                 "admin" if port != a.port else "public", a.probe_src, len(lat),
                                                 pct(0.5), pct(0.99), lat[-1] * 1e3 if lat else float("nan"), failed),
          flush=True)
    for _, s, _ in socks:
        s.close()
    if daemon is not None:
        daemon.terminate()
        daemon.wait()

main()
