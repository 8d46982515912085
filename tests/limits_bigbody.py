#!/usr/bin/env python3
"""Measures multi-megabyte JSON bodies against a skinnerd (docs/limits.md).

usage: python3 tests/limits_bigbody.py ./skinnerd     (from the top directory)

Starts the daemon on 127.0.0.1 (port 0, --max-body 4194304), stores
tests/data/mannequiny-0.3.0.glb, then sends three ~4 MB bodies while a
thread asks /healthz every 2 ms, and prints for each: status, time, the
slowest /healthz meanwhile and the daemon's VmHWM. A measurement, not a test
(tests/check_limits_bodies asserts the bounds).
"""
import socket
import subprocess
import sys
import threading
import time

exe = sys.argv[1]
p = subprocess.Popen([exe, "--listen", "127.0.0.1:0", "--max-body", "4194304"], stdout=subprocess.PIPE)
line = p.stdout.readline().decode(); port = int(line.strip().rsplit(":", 1)[1])
def req(method, path, body=b"", ct="application/json"):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: {ct}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    d = b""
    while True:
        c = s.recv(1 << 20)
        if not c: break
        d += c
    s.close(); return d
req("PUT", "/v1/skeletons/mq", open("tests/data/mannequiny-0.3.0.glb", "rb").read(), "model/gltf-binary")
stop = False; lat = []
def probe():
    while not stop:
        t = time.time(); req("GET", "/healthz"); lat.append((time.time() - t) * 1e3); time.sleep(0.002)
th = threading.Thread(target=probe); th.start(); time.sleep(0.1)
def hwm():
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith("VmHWM"): return int(l.split()[1]) >> 10
bodies = {
 "pose times 4 MB": ('/v1/skeletons/mq/pose', b'{"animation":"walk","times":[' + b",".join([b"0"] * 2000000) + b']}'),
 "poses 4 MB of {}": ('/v1/skeletons/mq/poses', b'{"poses":[' + b",".join([b"{}"] * 1300000) + b']}'),
 "skeleton 4 MB json": ('/v1/skeletons', b'{"bones":[' + b",".join([b'{"name":"b","position":[0,0,0]}'] * 130000) + b']}'),
}
for name, (path, body) in bodies.items():
    n0 = len(lat); h0 = hwm(); t = time.time(); d = req("POST", path, body); ms = (time.time() - t) * 1e3
    time.sleep(0.05)
    print(f"{name}: {len(body)} bytes -> {d.split(b' ')[1].decode()} in {ms:.0f} ms, slowest healthz {max(lat[n0:]):.1f} ms, VmHWM {h0} -> {hwm()} MB")
stop = True; th.join(); p.terminate(); p.wait()
