#!/usr/bin/env python3
"""Byte identity of pose answers between two skinnerd binaries.

usage: mem_identity.py OLD_EXE NEW_EXE [BONES=300]
Sends the same batches (kernel and core, JSON, octet-stream, mat3x4, all
outputs, a small one) to both and compares status, length and SHA-256.
"""
import subprocess, http.client, json, hashlib, sys, random
def start(exe, extra=()):
    p = subprocess.Popen([exe, "--listen", "127.0.0.1:0", *extra], stdout=subprocess.PIPE)
    line = p.stdout.readline().decode()
    port = int(line.strip().rsplit(":", 1)[1])
    return p, port
def req(port, method, path, body=None, accept="application/json"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    h = {"Accept": accept}
    if body is not None:
        h["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=h)
    r = c.getresponse(); data = r.read(); c.close()
    return r.status, dict(r.getheaders()), data
def tree(n):
    seed = 12345; bones = []
    for i in range(n):
        b = {"name": "bone%d" % i}
        if i > 0:
            p = i - 1 if i < 9 else ((i - 9) // 8 + 1 if (i - 9) % 8 == 0 else i - 1)
            b["parent"] = "bone%d" % p
        v = []
        for k in range(4):
            seed = (seed * 1103515245 + 12345) & 0xffffffff
            v.append(((seed >> 8) % 2000) / 1000.0 - 1.0)
        b["position"] = [v[0]*0.3, v[1]*0.3+0.2, v[2]*0.3]; b["rotation"] = [v[1], v[2], v[3]]
        bones.append(b)
    return json.dumps({"bones": bones})
NB = int(sys.argv[3]) if len(sys.argv) > 3 else 300
rnd = random.Random(7)
def frame(k, skin):
    bones = {}
    for b in range(NB):
        d = {"rotation": [0.01*k + 0.001*b, -0.02*k, 0.5]}
        if b % 3 == 0: d["position"] = [0, 0.001*k, 0]
        bones["bone%d" % b] = d
    return {"bones": bones, "initialSkinMatrix": [1,0,0,0,0,1,0,0,0,0,1,0,skin,0,0,1]}
cases = {
 "kernel_json": json.dumps({"poses": [frame(k, 0.5) for k in range(200)]}),
 "scalar_json": json.dumps({"poses": [frame(k, 0.1*(k%5)) for k in range(200)]}),
 "all_outputs": json.dumps({"poses": [{"output": ["final","absolute","local"], "bones": {"bone%d" % (k % NB): {"rotation": [0.1*k, 0, 0]}}} for k in range(100)]}),
 "small": json.dumps({"poses": [frame(k, 0.5) for k in range(3)]}),
}
res = {}
for exe in (sys.argv[1], sys.argv[2]):
    p, port = start(exe, ["--max-body", "67108864"])
    st, _, _ = req(port, "PUT", "/v1/skeletons/s", tree(NB)); assert st == 201, st
    out = {}
    for name, body in cases.items():
        for acc in ("application/json", "application/octet-stream", "application/x-skinner-mat3x4"):
            if name == "all_outputs" and acc != "application/json": continue
            st, h, data = req(port, "POST", "/v1/skeletons/s/poses", body, acc)
            out[(name, acc)] = (st, len(data), hashlib.sha256(data).hexdigest()[:16], h.get("Transfer-Encoding"), h.get("Content-Length"))
    p.terminate(); p.wait()
    res[exe] = out
a, b = res[sys.argv[1]], res[sys.argv[2]]
ok = True
for k in a:
    same = a[k][:3] == b[k][:3]
    ok &= same
    print("same" if same else "DIFF", k, a[k], b[k])
print("ALL IDENTICAL" if ok else "MISMATCH")
