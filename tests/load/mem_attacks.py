#!/usr/bin/env python3
"""Issue 11's memory attacks against a skinnerd binary, printing peak RSS.

usage: mem_attacks.py EXE MODE [skinnerd args...]
  MODE slow      READERS (env, 6) clients of a ~421 MB JSON answer (a 45 KB
                 body on 1024 bones) each read 1 MB slowly
  MODE batches   64 concurrent binary batches with 16.8 MB answers
  MODE halfsent  64 uploads announce 4 MiB and stall, then send all but 1 KB
Not a `make check` test (before figures need a daemon without a budget, which
can take gigabytes); tests/check_memory.c holds the same attacks to bounds.
"""
import json, os, socket, subprocess, sys, threading, time


def start(exe, extra):
    p = subprocess.Popen([exe, "--listen", "127.0.0.1:0", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    port = int(p.stdout.readline().decode().strip().rsplit(":", 1)[1])
    return p, port


def hwm(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM"):
            return int(line.split()[1])


def tree(n):
    """tests/sk_testskel.h's sk_test_tree_skeleton(n)."""
    seed, bones = 12345, []
    for i in range(n):
        b = {"name": "bone%d" % i}
        if i > 0:
            p = i - 1 if i < 9 else ((i - 9) // 8 + 1 if (i - 9) % 8 == 0 else i - 1)
            b["parent"] = "bone%d" % p
        v = []
        for _ in range(4):
            seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
            v.append(((seed >> 8) % 2000) / 1000.0 - 1.0)
        b["position"] = [v[0] * 0.3, v[1] * 0.3 + 0.2, v[2] * 0.3]
        b["rotation"] = [v[1], v[2], v[3]]
        bones.append(b)
    return json.dumps({"bones": bones}).encode()


def send(port, method, path, body, accept="application/json", announce=None):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)  # before connect: a small window from the start
    s.connect(("127.0.0.1", port))
    h = "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAccept: %s\r\nContent-Type: application/json\r\n" \
        "Content-Length: %d\r\n\r\n" % (method, path, accept, len(body) if announce is None else announce)
    s.sendall(h.encode())
    try:
        s.sendall(body)
    except OSError:
        pass
    return s


def head(s, timeout=30):
    s.settimeout(timeout)
    b = b""
    try:
        while not b.endswith(b"\r\n\r\n"):
            c = s.recv(1)
            if not c:
                break
            b += c
    except OSError:
        pass
    return b.decode(errors="replace")


def readn(s, n):
    got = 0
    while got < n:
        c = s.recv(min(65536, n - got))
        if not c:
            break
        got += len(c)
    return got


def put(port, id_, body):
    s = send(port, "PUT", "/v1/skeletons/" + id_, body)
    assert head(s).split(" ")[1] in ("200", "201")
    s.close()


def slow(p, port):
    n = int(os.environ.get("READERS", "6"))
    put(port, "big", tree(1024))
    body = json.dumps({"poses": [{"output": ["final", "absolute", "local"]}] * 1024}).encode()
    t0, socks, worst = time.time(), [], 0
    for _ in range(n):
        s = send(port, "POST", "/v1/skeletons/big/poses", body)
        head(s, 120)
        socks.append(s)
    for _ in range(8):
        for s in socks:
            readn(s, 128 * 1024)
        a = time.time()
        c = send(port, "GET", "/healthz", b"")
        head(c)
        c.close()
        worst = max(worst, time.time() - a)
        time.sleep(0.1)
    print("%d slow readers of a %d-byte-body answer, 1 MB read each: VmHWM %d kB, healthz worst %.1f ms, %.1f s"
          % (n, len(body), hwm(p.pid), worst * 1e3, time.time() - t0))
    for s in socks:
        s.close()


def batches(p, port):
    put(port, "mid", tree(256))
    poses = [{"bones": {"bone0": {"rotation": [0.01 * k, 0.1, 0]}, "bone5": {"position": [0, 0.001 * k, 0]}},
              "initialSkinMatrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5, 0, 0, 1]} for k in range(1024)]
    body = json.dumps({"poses": poses}).encode()
    res, bar = [], threading.Barrier(64)

    def client():
        s = send(port, "POST", "/v1/skeletons/mid/poses", body, "application/octet-stream")
        h = head(s)
        st = h.split(" ")[1] if h else "none"
        if st != "200":
            try:
                s.recv(4096)
            except OSError:
                pass
        bar.wait()  # every admitted answer is in flight at once
        if st == "200":
            cl = [x for x in h.split("\r\n") if x.lower().startswith("content-length")]
            readn(s, int(cl[0].split(":")[1]))
        res.append(st)
        s.close()

    t0 = time.time()
    ts = [threading.Thread(target=client) for _ in range(64)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("64 concurrent 16.8 MB batches: %d x 200, %d x 503, %.1f s, VmHWM %d kB"
          % (res.count("200"), res.count("503"), time.time() - t0, hwm(p.pid)))


def halfsent(p, port):
    socks, early = [], 0
    for _ in range(64):
        s = send(port, "PUT", "/v1/skeletons/x", b" " * 1024, announce=4 << 20)
        if head(s, 0.3):
            early += 1
        socks.append(s)
    time.sleep(0.5)
    print("64 half-sent 4 MiB bodies: %d answered at once (503), VmHWM %d kB" % (early, hwm(p.pid)))
    for s in socks:
        try:
            s.sendall(b" " * ((4 << 20) - 2048))
        except OSError:
            pass
    time.sleep(1)
    print("  ... after sending all but 1 KB of each: VmHWM %d kB" % hwm(p.pid))
    for s in socks:
        s.close()


if __name__ == "__main__":
    exe, mode, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    proc, port = start(exe, extra)
    try:
        {"slow": slow, "batches": batches, "halfsent": halfsent}[mode](proc, port)
    finally:
        proc.terminate()
        proc.wait()
