#!/usr/bin/env python3
"""tests/bench/sendbase, the HTTP row's baseline in `make bench-clips`,
answers like the daemon it stands in for: keep-alive requests on one
connection (with and without a body, a body larger than its buffer, two
requests in one write) each get 200 and exactly BYTES bytes, and it exits 0
on SIGTERM."""
import http.client
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import Checks  # noqa: E402

SKINNER = os.environ.get("SKINNER", "./skinner")
SENDBASE = os.path.join(os.path.dirname(os.path.abspath(SKINNER)), "tests", "bench", "sendbase")
BYTES = 1024 * 25 * 64  # bench_clips.py's answer: 1024 frames of Fox
CHECKS = Checks("sendbase_http")
check = CHECKS.check


def read_answer(f):
    """(status, body length) of one answer read from file object f."""
    status = int(f.readline().split()[1])
    length = None
    while True:
        line = f.readline().strip()
        if not line:
            break
        k, v = line.split(b":", 1)
        if k.strip().lower() == b"content-length":
            length = int(v)
    return status, len(f.read(length))


def main():
    if not os.access(SENDBASE, os.X_OK):
        print("FAIL: %s not built" % SENDBASE)
        return 1
    bad = subprocess.run([SENDBASE, "-1"], capture_output=True, timeout=30)
    check("a bad BYTES exits 2 with usage", bad.returncode == 2 and b"usage" in bad.stderr)
    p = subprocess.Popen([SENDBASE, str(BYTES)], stdout=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline().split()
        check("first line says where it listens", first[:2] == ["listening", "on"])
        host, port = first[-1].rsplit(":", 1)
        check("listens on loopback", host == "127.0.0.1")
        c = http.client.HTTPConnection(host, int(port), timeout=60)
        hdr = {"Host": "localhost", "Accept": "application/octet-stream"}
        c.request("GET", "/", headers=hdr)
        r = c.getresponse()
        d = r.read()
        check("GET: 200", r.status == 200)
        check("GET: BYTES bytes", len(d) == BYTES and d[:3] == b"abc")
        check("octet-stream", r.getheader("Content-Type") == "application/octet-stream")
        sock1 = c.sock
        body = b'{"animation": "Walk", "from": 0, "to": 17.05, "fps": 60, "loop": true}'
        c.request("POST", "/v1/skeletons/fox/pose", body, dict(hdr, **{"Content-Type": "application/json"}))
        r = c.getresponse()
        check("POST with a body on the same connection: 200", r.status == 200 and c.sock is sock1)
        check("POST: BYTES bytes", len(r.read()) == BYTES)
        c.request("POST", "/", b"x" * (1 << 20), hdr)
        r = c.getresponse()
        check("a 1 MiB body is read and dropped: 200, BYTES bytes", r.status == 200 and len(r.read()) == BYTES)
        c.close()
        with socket.create_connection((host, int(port)), timeout=60) as s:
            req = b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello"
            s.sendall(req + b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            f = s.makefile("rb")
            check("pipelined 1: 200, BYTES bytes", read_answer(f) == (200, BYTES))
            check("pipelined 2: 200, BYTES bytes", read_answer(f) == (200, BYTES))
            check("Connection: close closes", f.read() == b"")
        with socket.create_connection((host, int(port)), timeout=60) as s:
            s.sendall(b"GET / HTTP/1.1\r\n" + b"X: " + b"y" * 20000 + b"\r\n\r\n")
            try:  # closed with the rest unread: EOF or a reset
                got = s.makefile("rb").read()
            except ConnectionResetError:
                got = b""
            check("headers over its buffer: closed, no answer", got == b"")
        p.terminate()
        check("SIGTERM: exit 0", p.wait(timeout=30) == 0)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
