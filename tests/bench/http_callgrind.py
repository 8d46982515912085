#!/usr/bin/env python3
"""Instructions per single-pose request, end to end, under callgrind. Not a test.

  python3 tests/bench/http_callgrind.py [--requests N] [--top K] [--json] [--batch N] [--syscalls]
      [--arg ARG ...] SKINNERD [SKINNERD ...]

For each build: skinnerd runs under `valgrind --tool=callgrind`; the
65-bone skeleton of http_bench.py is PUT and 50 requests warm the daemon;
then the counters are zeroed (callgrind_control -z), exactly N POST /pose
requests (the one-bone pose of http_bench.py, binary answer unless --json)
go back to back on one keep-alive connection, and the counters are dumped
(callgrind_control -d). With --batch N, POST /poses with N such poses
instead (the batch rows of http_bench.py are N = 64). --arg passes an
argument to every daemon (repeat it: --arg=--conn-memory --arg=4096), so
one build compares with itself under two settings. Instructions per request = the dump's Ir / N: all
the daemon's user-space instructions for a request (libmicrohttpd, libuv
and libc included; the kernel's side of the syscalls not counted). With
--top, the functions with the most exclusive instructions per request.
Instruction counts do not drift with the machine's load, so two
builds compare in one run without alternating.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import http_bench  # noqa: E402  (the skeleton and the pose of the HTTP bench)


def send_all(s, data):
    s.sendall(data)


def read_answer(s, buf):
    """Reads one HTTP/1.1 answer with Content-Length from s; returns (status, rest of buf)."""
    while b"\r\n\r\n" not in buf:
        c = s.recv(65536)
        if not c:
            raise SystemExit("connection closed")
        buf += c
    head, _, rest = buf.partition(b"\r\n\r\n")
    m = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
    n = int(m.group(1)) if m else 0
    while len(rest) < n:
        c = s.recv(65536)
        if not c:
            raise SystemExit("connection closed in a body")
        rest += c
    return int(head.split(b" ", 2)[1]), rest[n:]


def run(exe, n, accept, top, tmp, keep=None, tag="0", batch=0, extra=()):
    out = os.path.join(tmp, "cg.out.%d" % os.getpid())
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                          os.path.abspath(exe), "--listen", "127.0.0.1:0", "--threads", "1"] + list(extra),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, cwd=tmp)
    try:
        line = p.stdout.readline()
        m = re.match(rb"listening on 127\.0\.0\.1:(\d+)", line)
        if not m:
            raise SystemExit("%s did not start under valgrind (%r)" % (exe, line))
        port = int(m.group(1))
        s, req = connect_warm(port, accept, batch)
        buf = b""
        ctl = ["callgrind_control"]
        subprocess.run(ctl + ["-z", str(p.pid)], check=True, capture_output=True, cwd=tmp)
        for _ in range(n):
            send_all(s, req)
            st, buf = read_answer(s, buf)
        subprocess.run(ctl + ["-d", str(p.pid)], check=True, capture_output=True, cwd=tmp)
        s.close()
    finally:
        p.terminate()
        p.wait()
    dumps = [f for f in os.listdir(tmp) if f.startswith("cg.out") and f.endswith(".1")]  # the -d dump
    total, rows = None, []
    for f in dumps:
        path = os.path.join(tmp, f)
        text = open(path, errors="replace").read()
        m = re.search(r"^summary:\s*(\d+)", text, re.M) or re.search(r"^totals:\s*(\d+)", text, re.M)
        if not m or int(m.group(1)) == 0:
            continue
        total = int(m.group(1))
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(path, os.path.join(keep, "callgrind.out.%s" % tag))
        if top:
            a = subprocess.run(["callgrind_annotate", "--threshold=100", path], capture_output=True, text=True)
            for l in a.stdout.splitlines():
                mm = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S.*)$", l)
                # (below main), main and the like carry every instruction: not a row
                if mm and int(mm.group(1).replace(",", "")) < total:
                    rows.append((int(mm.group(1).replace(",", "")), mm.group(2)))
    if total is None:
        raise SystemExit("no callgrind dump with instructions for %s" % exe)
    return total / n, rows[:top]


def syscalls(exe, n, accept, batch=0, extra=()):
    """{name: calls per request} over n requests, strace attached after the warm-up."""
    tmp = tempfile.mkdtemp(prefix="skinnerd-st-")
    out = os.path.join(tmp, "strace.txt")
    p = subprocess.Popen([os.path.abspath(exe), "--listen", "127.0.0.1:0", "--threads", "1"] + list(extra),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        port = int(re.match(rb"listening on 127\.0\.0\.1:(\d+)", p.stdout.readline()).group(1))
        s, req = connect_warm(port, accept, batch)
        st = subprocess.Popen(["strace", "-c", "-f", "-o", out, "-p", str(p.pid)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        st.stderr.readline()  # "strace: Process N attached"
        time.sleep(0.3)
        buf = b""
        for _ in range(n):
            s.sendall(req)
            _, buf = read_answer(s, buf)
        st.send_signal(signal.SIGINT)
        st.wait(timeout=30)
        s.close()
    finally:
        p.terminate()
        p.wait()
    calls = {}
    for line in open(out):
        f = line.split()
        if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
            calls[f[-1]] = int(f[3]) / n
    shutil.rmtree(tmp, ignore_errors=True)
    return calls


def connect_warm(port, accept, batch=0):
    """The skeleton PUT, a keep-alive connection and 50 warm-up requests: (socket, request bytes).
    batch > 0: POST /poses with that many one-bone poses instead of one POST /pose."""
    st, _, b = http_bench.request(port, "PUT", "/v1/skeletons/bench65", {"Content-Type": "application/json"},
                                  json.dumps(http_bench.skeleton65()).encode())
    if st not in (200, 201):
        raise SystemExit("PUT: %d %r" % (st, b[:200]))
    rng = random.Random(4242)
    if batch > 0:
        path = "/v1/skeletons/bench65/poses"
        body = json.dumps({"poses": [http_bench.small_pose(rng) for _ in range(batch)]}).encode()
    else:
        path = "/v1/skeletons/bench65/pose"
        body = json.dumps(http_bench.small_pose(rng)).encode()
    req = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
           "Accept: %s\r\nContent-Length: %d\r\n\r\n" % (path, port, accept, len(body))).encode() + body
    s = socket.create_connection(("127.0.0.1", port), timeout=120)
    buf = b""
    for _ in range(50):  # warm: allocator, caches, the connection's pool
        s.sendall(req)
        st, buf = read_answer(s, buf)
        if st != 200:
            raise SystemExit("pose: %d" % st)
    return s, req


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("skinnerd", nargs="+")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--keep", metavar="DIR", help="copy each build's dump into DIR (for callgrind_annotate)")
    ap.add_argument("--syscalls", action="store_true", help="also system calls per request (strace -c)")
    ap.add_argument("--json", action="store_true", help="the JSON answer instead of the binary one")
    ap.add_argument("--batch", type=int, default=0, metavar="N", help="POST /poses with N one-bone poses")
    ap.add_argument("--arg", action="append", default=[], metavar="ARG", help="an argument for every daemon")
    a = ap.parse_args()
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            raise SystemExit("needs %s (Debian package valgrind)" % tool)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    accept = "application/json" if a.json else "application/octet-stream"
    what = "POST /poses (%d poses, one bone moved in each" % a.batch if a.batch > 0 else "POST /pose (one bone moved"
    print("# CPU: %s; %d %s, %s answer) on one keep-alive connection, under callgrind%s" % (
        cpu, a.requests, what, accept, " with " + " ".join(a.arg) if a.arg else ""))
    tmp = tempfile.mkdtemp(prefix="skinnerd-cg-")
    base = None
    try:
        for i, exe in enumerate(a.skinnerd):
            ir, rows = run(exe, a.requests, accept, a.top, tmp, a.keep, str(i), a.batch, a.arg)
            rel = "" if base is None else ", %.3f of the first" % (ir / base)
            base = base or ir
            print("%-50s %8.0f instructions per request%s" % (exe, ir, rel))
            for v, name in rows:
                print("    %8.0f  %s" % (v / a.requests, name))
            if a.syscalls:
                calls = syscalls(exe, a.requests, accept, a.batch, a.arg)
                print("    %.2f system calls per request: %s" % (sum(calls.values()), ", ".join(
                    "%s %.2f" % kv for kv in sorted(calls.items(), key=lambda kv: -kv[1]) if kv[1] >= 0.01)))
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
