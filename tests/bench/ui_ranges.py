#!/usr/bin/env python3
"""What the preview page's range requests save: 30 frames of Fox's Run clip
as 30 single-pose requests against one from/to/fps range request, binary
mat3x4 answers, one keep-alive connection, best of 20 rounds (not a test).

usage: python3 tests/bench/ui_ranges.py [SKINNERD [FOX.glb]]
"""
import http.client
import json
import subprocess
import sys
import time

exe = sys.argv[1] if len(sys.argv) > 1 else "./skinnerd"
glb = sys.argv[2] if len(sys.argv) > 2 else "tests/data/Fox.glb"
d = subprocess.Popen([exe, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
try:
    port = int(d.stdout.readline().strip().rsplit(":", 1)[1])
    c = http.client.HTTPConnection("127.0.0.1", port)
    with open(glb, "rb") as f:
        c.request("PUT", "/v1/skeletons/fox", f.read(), {"Content-Type": "model/gltf-binary"})
    r = c.getresponse()
    r.read()
    assert r.status in (200, 201), r.status
    headers = {"Content-Type": "application/json", "Accept": "application/x-skinner-mat3x4"}

    def post(body):
        c.request("POST", "/v1/skeletons/fox/pose", json.dumps(body), headers)
        r = c.getresponse()
        data = r.read()
        assert r.status == 200, data
        return data

    for _ in range(50):
        post({"animation": "Run", "time": 0.1})
    single = ranged = float("inf")
    for _ in range(20):
        t = time.perf_counter()
        for k in range(30):
            post({"animation": "Run", "time": k / 30})
        single = min(single, time.perf_counter() - t)
        t = time.perf_counter()
        data = post({"animation": "Run", "from": 0, "to": 29 / 30 + 1e-6, "fps": 30})
        ranged = min(ranged, time.perf_counter() - t)
    print(f"30 frames of Fox Run: 30 single requests {single * 1e3:.2f} ms, "
          f"one range request {ranged * 1e3:.2f} ms ({len(data)} bytes), {single / ranged:.0f}x")
finally:
    d.terminate()
    d.wait()
