#!/usr/bin/env python3
"""Issue 11's access and framing attacks against one skinnerd binary, as a
table (the before/after figures of docs/history/security.md):

    python3 tests/bench/access_attacks.py ./skinnerd [/path/to/old/skinnerd]

For each binary: each smuggling request with a hidden DELETE (did the
DELETE run?), a DNS-rebinding Host, the signals SIGUSR1, SIGUSR2, SIGHUP
(does the daemon survive?), and the cost of the token check (the daemon's
own CPU time per GET /v1/skeletons/s on one keep-alive connection, from
/proc/PID/stat, open vs. with --tokens: CPU time, not wall time, so other
load on the machine matters little).
Not a test: it prints what happens.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOKEN = "bench-reader-0123456789abcdef"
SKEL = b'{"bones":[{"name":"root"},{"name":"a","parent":"root","position":[0,1,0]}]}'
HIDDEN = b"DELETE /v1/skeletons/s HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n"
POSE = b"POST /v1/skeletons/s/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
ATTACKS = [
    ("Content-Length + Transfer-Encoding", POSE + b"Content-Length: 60\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("two different Content-Length", POSE + b"Content-Length: 2\r\nContent-Length: 80\r\n\r\n{}"),
    ("two equal Content-Length", POSE + b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
    ("Transfer-Encoding: gzip, chunked", POSE + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
    ("Content-Length: +2", POSE + b"Content-Length: +2\r\n\r\n{}"),
]


def start(binary, args):
    p = subprocess.Popen([binary, "--listen", "127.0.0.1:0"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    m = re.match(rb"listening on 127\.0\.0\.1:(\d+)", p.stdout.readline())
    return p, int(m.group(1))


def exchange(port, data, wait=1.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    s.sendall(data)
    out = b""
    try:
        while True:
            k = s.recv(65536)
            if not k:
                break
            out += k
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return out


def status(port, method, path, body=None, extra=b""):
    req = b"%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s" % (method.encode(), path.encode(), extra)
    if body is not None:
        req += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    req += b"\r\n" + (body or b"")
    m = re.match(rb"HTTP/1\.\d (\d+)", exchange(port, req))
    return int(m.group(1)) if m else 0


def cpu_seconds(pid):
    """utime + stime of the daemon (clock ticks -> s): its own CPU, whatever else the machine runs."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per_request(p, port, auth, n=30000):
    """Daemon CPU microseconds per GET /v1/skeletons/s on one keep-alive connection."""
    req = b"GET /v1/skeletons/s HTTP/1.1\r\nHost: localhost\r\n%s\r\n" % auth
    s = socket.create_connection(("127.0.0.1", port))
    buf = b""
    c0 = cpu_seconds(p.pid)
    for _ in range(n):
        s.sendall(req)
        while True:
            head_end = buf.find(b"\r\n\r\n")
            if head_end >= 0:
                assert buf.startswith(b"HTTP/1.1 200"), buf[:40]
                cl = int(re.search(rb"Content-Length: (\d+)", buf[:head_end]).group(1))
                if len(buf) >= head_end + 4 + cl:
                    buf = buf[head_end + 4 + cl:]
                    break
            buf += s.recv(65536)
    c1 = cpu_seconds(p.pid)
    s.close()
    return (c1 - c0) / n * 1e6


def run(binary):
    print("## %s" % binary)
    p, port = start(binary, [])
    for name, data in ATTACKS:
        status(port, "PUT", "/v1/skeletons/s", SKEL)
        out = exchange(port, data + HIDDEN)
        answers = [int(x) for x in re.findall(rb"HTTP/1\.1 (\d+)", out)]
        ran = status(port, "GET", "/v1/skeletons/s") == 404
        print("%-36s answers %-14s hidden DELETE ran: %s" % (name, answers, "YES" if ran else "no"))
    out = exchange(port, b"GET /v1/skeletons HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n")
    print("%-36s %s" % ("Host: attacker.example:", out.split(b"\r\n")[0].decode()))
    open_cost = cpu_per_request(p, port, b"")
    for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP):
        if p.poll() is None:
            p.send_signal(sig)
            time.sleep(0.3)
            print("%-36s %s" % (signal.Signals(sig).name + ":", "survives" if p.poll() is None else
                                "daemon died (%s)" % p.returncode))
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    p.wait()
    print("%-36s %.1f us daemon CPU per request (open daemon)" % ("GET /v1/skeletons/s:", open_cost))


def rate_with_tokens(binary):
    with tempfile.NamedTemporaryFile("w", suffix=".tokens", delete=False) as f:
        f.write("%s write\n" % TOKEN)
        for i in range(99):
            f.write("other-token-%04d-0123456789abcdef read\n" % i)
    p, port = start(binary, ["--tokens", f.name])
    auth = b"Authorization: Bearer %s\r\n" % TOKEN.encode()
    status(port, "PUT", "/v1/skeletons/s", SKEL, auth)
    r = cpu_per_request(p, port, auth)
    p.send_signal(signal.SIGTERM)
    p.wait()
    os.unlink(f.name)
    print("%-36s %.1f us daemon CPU per request (--tokens, 100 tokens)" % ("GET /v1/skeletons/s:", r))


if __name__ == "__main__":
    for b in sys.argv[1:] or ["./skinnerd"]:
        run(b)
        if subprocess.run([b, "--help"], capture_output=True).stdout.find(b"--tokens") >= 0:
            rate_with_tokens(b)
