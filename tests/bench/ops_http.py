#!/usr/bin/env python3
"""Foot IK on a 1024-frame Fox Walk range over HTTP against the same range
without ops (wall, one client): `python3 tests/bench/ops_http.py` from the
build directory (./skinnerd, tests/data/Fox.glb). Not a test."""
import http.client, json, subprocess, time, statistics, sys
p = subprocess.Popen(["./skinnerd", "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
port = int(p.stdout.readline().strip().rsplit(":", 1)[1])
c = http.client.HTTPConnection("127.0.0.1", port)
def req(m, path, body, ct="application/json", accept=None):
    h = {"Host": "localhost", "Content-Type": ct}
    if accept: h["Accept"] = accept
    c.request(m, path, body=body, headers=h); r = c.getresponse(); return r.status, r.read()
req("PUT", "/v1/skeletons/fox", open("tests/data/Fox.glb", "rb").read(), "model/gltf-binary")
plain = {"animation": "Walk", "from": 0, "to": 0.7, "fps": 1461.43}
ik = dict(plain, ops=[{"op": "ik", "bone": "b_LeftLeg02_016", "target": [-4, 30, -50]}])
for acc in ("application/octet-stream", None):
    res = {}
    for name, b in (("plain", plain), ("ik", ik)):
        ts = []
        for k in range(15):
            t0 = time.perf_counter(); st, body = req("POST", "/v1/skeletons/fox/pose", json.dumps(b), accept=acc); ts.append(time.perf_counter() - t0)
            assert st == 200, body[:200]
        res[name] = statistics.median(ts) * 1e6 / 1024
    print(acc or "json", "plain %.2f us/frame, ik %.2f us/frame, x%.2f" % (res["plain"], res["ik"], res["ik"] / res["plain"]))
p.terminate(); p.wait()
