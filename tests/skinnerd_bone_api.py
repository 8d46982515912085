#!/usr/bin/env python3
"""Babylon's Bone API through the daemon (issue 13): the generated cases of
tests/conformance/ops.jsonl whose history fits one pose request, posed
through POST /pose and inside /poses batches, equal `skinner eval`'s bytes
and Babylon's numbers (float32 matrices bit for bit, query doubles exact,
Euler read-backs included, as tests/check_sk_ops holds them); foot IK on
every frame of Fox's Walk equals Babylon's glTF answer; POST /ops is all or
nothing and survives a restart with --data-dir. The Babylon-format clip cases
(tests/conformance/anim.jsonl, banim_layers.jsonl) and the glTF layer specs
(layers.jsonl) go through `skinner eval` (against Babylon's numbers) and the
daemon's /pose and /poses (against skinner eval's bytes and Babylon's
numbers) the same way. Every daemon listens on 127.0.0.1 and is stopped by
the check that started it.

    skinnerd_bone_api.py                      the committed cases, the real
                                              assets and POST /ops
    skinnerd_bone_api.py --ops F --anim G --layers H
                                              only these case files (any
                                              seed; `make conformance`)"""
import argparse, http.client, json, math, os, shutil, signal, struct, subprocess, sys, tempfile

SKINNERD = os.environ.get("SKINNERD", "./skinnerd")
SKINNER = os.path.abspath(os.environ.get("SKINNER", "./skinner"))  # eval_text may run elsewhere
DATA = os.path.abspath(os.environ.get("SK_TEST_DATA", "tests"))
passed = failed = 0

# ops that take a "mesh" (sk_ops: spaced ops, ik, lookAt)
MESH_OPS = {"translate", "setPosition", "setAbsolutePosition", "setYawPitchRoll", "rotate", "setAxisAngle",
            "setRotation", "setRotationQuaternion", "setRotationMatrix", "query", "ik", "lookAt"}
BONE_OPS = MESH_OPS | {"scale", "setScale", "setCurrentPoseAsRest"}


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {name} {str(detail)[:400]}")


class Daemon:
    def __init__(self, *args):
        self.p = subprocess.Popen([SKINNERD, "--listen", "127.0.0.1:0", *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline().strip().rsplit(":", 1)[1])
        self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def req(self, method, path, body=None, ctype="application/json", accept=None):
        h = {"Host": "localhost"}
        if body is not None:
            h["Content-Type"] = ctype
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
        if accept:
            h["Accept"] = accept
        self.c.request(method, path, body=body, headers=h)
        r = self.c.getresponse()
        return r.status, r.read()

    def stop(self):
        self.c.close()
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.communicate()


def eval_text(case, cwd=None):
    """`skinner eval` of `case`: its stdout (bytes)."""
    r = subprocess.run([SKINNER, "eval"], input=json.dumps(case).encode(), capture_output=True, cwd=cwd)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.strip()


def results_text(out):
    """The text of each entry of {"order": [...], "results": [...]} as written."""
    i = out.index(b'"results":[') + len(b'"results":[')
    body = out[i:-2]  # without the closing ]}
    parts, depth, start, instr = [], 0, 0, False
    for k, ch in enumerate(body):
        c = chr(ch)
        if instr:
            instr = c != '"' or body[k - 1] == ord("\\")
            continue
        if c == '"':
            instr = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:k])
            start = k + 1
    parts.append(body[start:])
    return parts


def derive(case):
    """One pose request equal to the case's history up to its first pose or
    evaluate, and Babylon's answer to it; None when the history does not fit
    (a "set" after a Bone op, returnToRest, setBind/setRest, a pose with
    bones or clips after ops)."""
    ops = case["ops"]
    cmesh = case.get("mesh")
    req, bops, k = {}, [], 0
    if ops and ops[0]["op"] == "set":
        req["bones"] = ops[0]["bones"]
        k = 1
    while k < len(ops) and ops[k]["op"] in BONE_OPS:
        op = dict(ops[k])
        if op["op"] in MESH_OPS and "mesh" not in op:
            op["mesh"] = cmesh  # the case's default mesh (None: no mesh)
        bops.append(op)
        k += 1
    if k == len(ops):
        return None
    last = ops[k]
    if last["op"] not in ("evaluate", "pose") or (last["op"] == "pose" and (
            ("bones" in last and bops) or "animation" in last or "layers" in last)):
        return None
    if last["op"] == "pose":
        if "bones" in last:
            req["bones"] = last["bones"]
        for op in last.get("ops", []):
            op = dict(op)
            if op["op"] in MESH_OPS and "mesh" not in op:
                op["mesh"] = last.get("mesh", cmesh)
            bops.append(op)
    for key in ("output", "initialSkinMatrix"):
        if key in last:
            req[key] = last[key]
    req["mesh"] = last.get("mesh", cmesh)
    if bops:
        req["ops"] = bops
    return req, k


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


# query values: doubles (Euler read-backs too: sk_fdlibm's atan2/asin are
# V8's), except the rotation matrix (float32, a Babylon Matrix)
QUERY_KIND = {"rotationMatrix": "matrix"}


def same_numbers(got, want, key=""):
    """Babylon's numbers: matrices as float32, query doubles exact (Euler angles too)."""
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(
            same_numbers(got[k], want[k], k if k != "value" else QUERY_KIND.get(want.get("query"), "value"))
            for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same_numbers(g, w, key) for g, w in zip(got, want))
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        if key == "value":
            return float(got) == float(want)
        return f32(float(got)) == f32(float(want))
    return got == want


def babylon_answer(line, k, req):
    """The case's expected answer for the derived request: the result of op
    k with the queries answered before it as its "queries" (present, maybe
    empty, whenever the request has ops, as skinner eval writes a pose)."""
    res = line["expected"]["results"]
    ops = line["case"]["ops"]
    nq = sum(1 for op in ops[:k] if op["op"] == "query")
    queries, obj = res[:nq], dict(res[nq])
    if "ops" in req:
        obj["queries"] = queries + obj.get("queries", [])
    return obj


def test_generated_cases(d, path, committed=True):
    """The ops cases of `path` (gen_ops.mjs lines) that fit one pose request.
    The committed file must cover every op; a fresh seed's file is held to
    the same answers but not to the coverage (a small COUNT may miss ops)."""
    cases = [json.loads(l) for l in open(path) if l.strip()]
    used, seen_ops, spaces, meshes = 0, set(), set(), set()
    bad_eval = bad_babylon = bad_batch = 0
    for n, line in enumerate(cases):
        dv = derive(line["case"])
        if dv is None:
            continue
        req, k = dv
        used += 1
        for op in req.get("ops", []):
            seen_ops.add(op["op"] if op["op"] != "query" else "query:" + op["get"])
            spaces.add((op["op"], op.get("space", "local")))
            meshes.add(op.get("mesh") is not None)
        sid = f"c{n}"
        st, _ = d.req("PUT", f"/v1/skeletons/{sid}", line["case"]["skeleton"])
        check(f"{sid}: PUT", st == 201, st)
        st, single = d.req("POST", f"/v1/skeletons/{sid}/pose", req)
        want = results_text(eval_text({"skeleton": line["case"]["skeleton"], "ops": [dict(req, op="pose")]}))
        if st != 200 or len(want) != 1 or single != want[0]:
            bad_eval += 1
            check(f"{line['name']}: /pose equals skinner eval's bytes", False, (st, single[:300], want[0][:300]))
        if not same_numbers(json.loads(single), babylon_answer(line, k, req)):
            bad_babylon += 1
            check(f"{line['name']}: /pose equals Babylon's answer", False, (single[:300], babylon_answer(line, k, req)))
        st, plain = d.req("POST", f"/v1/skeletons/{sid}/pose", {})
        st, batch = d.req("POST", f"/v1/skeletons/{sid}/poses", {"poses": [req, {}, req]})
        if st != 200 or batch != b'{"results":[' + single + b"," + plain + b"," + single + b"]}":
            bad_batch += 1
            check(f"{line['name']}: a /poses item equals its /pose bytes", False, (st, batch[:300]))
        d.req("DELETE", f"/v1/skeletons/{sid}")
    check(f"{used} generated cases through /pose equal skinner eval bit for bit",
          (used >= 100 or not committed) and bad_eval == 0, f"{used} cases, {bad_eval} differ")
    check(f"{used} generated cases through /pose equal Babylon's answers", bad_babylon == 0, bad_babylon)
    check(f"{used} generated cases through /poses batches equal /pose", bad_batch == 0, bad_batch)
    print(f"# {path}: {used} of {len(cases)} generated cases fit one pose request")
    if not committed:
        return
    every_op = {"translate", "setPosition", "setAbsolutePosition", "scale", "setScale", "setYawPitchRoll", "rotate",
                "setAxisAngle", "setRotation", "setRotationQuaternion", "setRotationMatrix", "setCurrentPoseAsRest",
                "ik", "lookAt"} | {"query:" + q for q in ("position", "absolutePosition", "direction", "rotation",
                                                             "rotationQuaternion", "rotationMatrix", "scale",
                                                             "absolutePositionFromLocal", "localPositionFromAbsolute")}
    check("the derived cases cover every op and query", every_op <= seen_ops, every_op - seen_ops)
    spaced = {op for op, sp in spaces if sp == "world"}
    check("the derived cases cover world space", {"translate", "setPosition", "rotate", "setAxisAngle", "setRotation",
                                                  "setRotationQuaternion", "setRotationMatrix", "setYawPitchRoll"} <= spaced,
          spaced)
    check("the derived cases cover ops with and without a mesh", meshes == {True, False}, meshes)


def is_range(pose):
    return "times" in pose or "from" in pose or "frames" in pose


def f32_bits(x):
    return struct.pack("<f", x)


def same_clip_numbers(got, want, signed_zero):
    """Babylon's clip results: float32 bit for bit, as tests/check_sk_banim
    holds them; the sign of zero too when the oracle writes it (signed_zero:
    babylon_layers.mjs does; parse skinnerd's answers with parse_int=float,
    its "-0" is -0.0 then)."""
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if set(g) != set(w):
            return False
        for key, wv in w.items():
            gv = g[key]
            if len(gv) != len(wv):
                return False
            if signed_zero and any(f32_bits(a) != f32_bits(b) for a, b in zip(gv, wv)):
                return False
            if not signed_zero and any(f32(a) != f32(b) for a, b in zip(gv, wv)):
                return False
    return True


def put_skeleton(d, sid, skel):
    """PUT a case's skeleton: Babylon JSON as is, {"gltf": path} as its file."""
    if isinstance(skel, dict) and "gltf" in skel:
        with open(os.path.join(DATA, skel["gltf"]), "rb") as f:
            ctype = "model/gltf-binary" if skel["gltf"].endswith(".glb") else "model/gltf+json"
            return d.req("PUT", f"/v1/skeletons/{sid}", f.read(), ctype=ctype)[0]
    return d.req("PUT", f"/v1/skeletons/{sid}", skel)[0]


def test_anim_cases(d, path, signed_zero=False):
    """Clip cases (gen_banim.mjs, gen_banim_layers.py, babylon_layers.mjs):
    the whole case through `skinner eval` against Babylon's numbers; a case
    of poses only, or a copyAnimationRange then poses (the copy stored with
    POST /animations), pose by pose through /pose (skinner eval's bytes,
    Babylon's numbers) and its single-time poses as one /poses batch."""
    cases = [json.loads(l) for l in open(path) if l.strip()]
    bad_eval = bad_pose = bad_babylon = bad_batch = used = copies = ranges = 0
    for n, line in enumerate(cases):
        case, name = line["case"], line["name"]
        r = subprocess.run([SKINNER, "eval"], input=json.dumps(case).encode(), capture_output=True, cwd=DATA)
        want = line["expected"]
        got = json.loads(r.stdout, parse_int=float) if r.returncode == 0 else None
        if got is None or ("order" in want and got["order"] != want["order"]) or \
                not same_clip_numbers(got["results"], want["results"], signed_zero):
            bad_eval += 1
            check(f"{name}: skinner eval equals Babylon", False, r.stderr.decode() or r.stdout[:300])
            continue
        ops = case["ops"]
        copy = ops[0] if ops and ops[0]["op"] == "copyAnimationRange" else None
        poses = ops[1:] if copy else ops
        if not poses or any(op["op"] != "pose" for op in poses):
            continue  # a "set" changes the case skeleton between poses: no one request says it
        sid = f"a{n}"
        st = put_skeleton(d, sid, case["skeleton"])
        check(f"{name}: PUT", st == 201, st)
        if copy:
            check(f"{name}: PUT the source", put_skeleton(d, sid + "src", copy["from"]) == 201)
            st, body = d.req("POST", f"/v1/skeletons/{sid}/animations",
                             {"from": sid + "src", "animation": copy["name"], "rescale": bool(copy.get("rescale"))})
            check(f"{name}: POST /animations stores the copy", st == 201, (st, body[:300]))
            copies += 1
        used += 1
        parts, singles, bodies = [], [], []
        for op in poses:
            body = {k: v for k, v in op.items() if k != "op"}
            st, ans = d.req("POST", f"/v1/skeletons/{sid}/pose", body)
            if st != 200:
                parts.append(b"")
                check(f"{name}: /pose answers 200", False, (st, ans[:300]))
                continue
            if is_range(op):
                ranges += 1
                rp = results_text(ans)
                parts.extend(rp)
                if ans != b'{"results":[' + b",".join(rp) + b"]}":
                    bad_pose += 1
            else:
                parts.append(ans)
                singles.append(body)
                bodies.append(ans)
        if parts != results_text(r.stdout.strip()):
            bad_pose += 1
            check(f"{name}: /pose equals skinner eval's bytes", False, (b",".join(parts)[:300], r.stdout[:300]))
        answers = [json.loads(p, parse_int=float) for p in parts if p]
        if not same_clip_numbers(answers, want["results"], signed_zero):
            bad_babylon += 1
            check(f"{name}: /pose equals Babylon's numbers", False)
        if len(singles) > 1:
            st, batch = d.req("POST", f"/v1/skeletons/{sid}/poses", {"poses": singles})
            if st != 200 or batch != b'{"results":[' + b",".join(bodies) + b"]}":
                bad_batch += 1
                check(f"{name}: a /poses batch equals its /pose bytes", False, (st, batch[:300]))
        d.req("DELETE", f"/v1/skeletons/{sid}")
        if copy:
            d.req("DELETE", f"/v1/skeletons/{sid}src")
    check(f"{path}: {len(cases)} cases through skinner eval equal Babylon bit for bit", bad_eval == 0, bad_eval)
    check(f"{path}: {used} cases through /pose equal skinner eval bit for bit", used > 0 and bad_pose == 0, bad_pose)
    check(f"{path}: and Babylon bit for bit", bad_babylon == 0, bad_babylon)
    check(f"{path}: their /poses batches equal /pose", bad_batch == 0, bad_batch)
    print(f"# {path}: {len(cases)} cases through skinner eval, {used} through the daemon "
          f"({copies} stored copies, {ranges} frame ranges)")


def real_asset(d, sid, glb, ctrl, what):
    """Every frame of a tests/gltf/ctrl case through one /poses batch and
    frame by frame through /pose: Babylon's glTF answer (float32 bit for bit,
    as tests/check_sk_ops holds the offline side) and skinner eval's bytes.
    Returns (case with an absolute glTF path, the poses, the bone order)."""
    with open(os.path.join(DATA, "data", glb), "rb") as f:
        st, _ = d.req("PUT", f"/v1/skeletons/{sid}", f.read(), ctype="model/gltf-binary")
    check(f"PUT {glb}", st == 201, st)
    real = json.load(open(os.path.join(DATA, "gltf", "ctrl", ctrl)))
    mesh = real["case"]["mesh"]
    poses = []
    for op in real["case"]["ops"]:
        p = {k: v for k, v in op.items() if k != "op"}
        p["mesh"] = mesh
        poses.append(p)
    st, body = d.req("POST", f"/v1/skeletons/{sid}/poses", {"poses": poses})
    check(f"{what}, every frame in one /poses", st == 200, (st, body[:300]))
    got = json.loads(body, parse_int=float)["results"] if st == 200 else []
    _, gb = d.req("GET", f"/v1/skeletons/{sid}")
    order = json.loads(gb)["order"]
    bad, ok = 0, len(got) == len(real["expected"]) == len(poses)
    for frame, want in zip(got, real["expected"]):
        for b, name in enumerate(order):
            bad += sum(f32_bits(frame["positions"][3 * b + c]) != f32_bits(want[name][c]) for c in range(3))
    check(f"{what} through the daemon equals Babylon's glTF answer bit for bit ({bad} numbers differ)",
          ok and bad == 0, bad)
    print(f"# {what}: {len(got)} frames, {bad} numbers not bit for bit against Babylon")
    case = dict(real["case"])
    case["skeleton"] = {"gltf": os.path.abspath(os.path.join(DATA, "data", glb))}
    case["ops"] = [dict(p, op="pose") for p in poses]
    want = results_text(eval_text(case))
    singles = [d.req("POST", f"/v1/skeletons/{sid}/pose", p)[1] for p in poses]
    check(f"{what} through /pose equals skinner eval bit for bit", singles == want)
    check(f"{what}: the /poses batch equals skinner eval bit for bit", body == b'{"results":[' + b",".join(want) + b"]}")
    return case, mesh, order


def test_fox_walk(d):
    real_asset(d, "cesium", "CesiumMan.glb", "cesiumman-head-look-at.json", "CesiumMan head look-at")
    case, mesh, order = real_asset(d, "fox", "Fox.glb", "fox-walk-foot-ik.json", "Fox Walk foot IK")
    # A frame range with ops: per-frame IK, the same bytes as skinner eval.
    rng = {"animation": "Walk", "from": 0, "to": 0.7, "fps": 30, "mesh": mesh, "output": ["final", "positions"],
           "ops": [{"op": "ik", "bone": "b_LeftLeg02_016", "target": [-4, 30, -50]},
                   {"op": "query", "bone": "b_LeftFoot01_017", "get": "absolutePosition"}]}
    st, body = d.req("POST", "/v1/skeletons/fox/pose", rng)
    want = eval_text(dict(case, ops=[dict(rng, op="pose")]))
    check("a Fox Walk range with IK equals skinner eval bit for bit",
          st == 200 and body == b'{"results":[' + b",".join(results_text(want)) + b"]}", (st, body[:200]))
    check("a range with ops answers every frame", st == 200 and len(json.loads(body)["results"]) == 22)
    # Binary: final, then world and positions, per pose (proto/bone-api.md).
    st, raw = d.req("POST", "/v1/skeletons/fox/pose", dict(rng, ops=rng["ops"][:1], output=["world", "positions"]),
                    accept="application/octet-stream")
    nb = len(order)
    per = (nb + 1) * 16 + nb * 16 + nb * 3
    check("a binary range with ops: final, world, positions per frame", st == 200 and len(raw) == 22 * per * 4,
          (st, len(raw)))
    st, js = d.req("POST", "/v1/skeletons/fox/pose", dict(rng, ops=rng["ops"][:1], output=["final", "world", "positions"]))
    if st == 200 and len(raw) == 22 * per * 4:
        vals = struct.unpack(f"<{22 * per}f", raw)
        ok = True
        for f, res in enumerate(json.loads(js)["results"]):
            row = res["final"] + res["world"] + res["positions"]
            ok = ok and all(f32(a) == b for a, b in zip(row, vals[f * per:(f + 1) * per]))
        check("the binary answer holds the JSON answer's floats", ok)
    st, body = d.req("POST", "/v1/skeletons/fox/pose", rng, accept="application/octet-stream")
    check("a query in a binary answer is a 422 at the op", st == 422 and json.loads(body)["pointer"] == "/ops/1", body)
    # 1024 frames: an answer over the streaming threshold, its length exact
    big = dict(rng, ops=rng["ops"][:1], output=["world", "positions"], fps=1461.43)
    st, raw_big = d.req("POST", "/v1/skeletons/fox/pose", big, accept="application/octet-stream")
    check("a streamed binary range with ops has the exact length", st == 200 and len(raw_big) == 1024 * per * 4,
          (st, len(raw_big)))
    check("and its first frame is the short range's", raw_big[:per * 4] == raw[:per * 4])
    st, js_big = d.req("POST", "/v1/skeletons/fox/pose", dict(big, output=["positions"]))
    check("a streamed JSON range with ops", st == 200 and len(json.loads(js_big)["results"]) == 1024, (st, js_big[:100]))
    # one pose with many ops: priced, then evaluated on the pool (same answer as inline)
    many = {"ops": [{"op": "rotate", "bone": order[5], "axis": [0, 1, 0], "amount": 0.001}] * 2000 +
                   [{"op": "query", "bone": order[6], "get": "absolutePosition"}], "output": ["positions"], "mesh": None}
    st, body = d.req("POST", "/v1/skeletons/fox/pose", many)
    want = results_text(eval_text(dict(case, mesh=None, ops=[dict(many, op="pose")])))
    check("one pose with 2000 ops equals skinner eval", st == 200 and [body] == want, (st, body[:200]))
    chain = {"bones": [{"name": "c0"}] + [{"name": "c%d" % i, "parent": "c%d" % (i - 1), "position": [0, 1, 0]}
                                          for i in range(1, 1000)]}
    check("PUT a 1000-bone chain", d.req("PUT", "/v1/skeletons/chain", chain)[0] == 201)
    heavy = {"ops": [{"op": "rotate", "bone": "c500", "axis": [0, 1, 0], "amount": 0.1}] * 9000}
    st, body = d.req("POST", "/v1/skeletons/chain/pose", heavy)
    check("ops over the work limit are a 413 at the pose", st == 413 and json.loads(body)["pointer"] == "", (st, body[:200]))
    st, body = d.req("POST", "/v1/skeletons/chain/ops", heavy)
    check("and at POST /ops", st == 413 and json.loads(body)["pointer"] == "/ops", (st, body[:200]))


def test_post_ops(tmp):
    data_dir = os.path.join(tmp, "data")
    skel = {"bones": [{"name": "hip", "length": 1}, {"name": "thigh", "parent": "hip", "position": [0, -1, 0], "length": 1},
                      {"name": "shin", "parent": "thigh", "position": [0, -1, 0], "length": 1},
                      {"name": "foot", "parent": "shin", "position": [0, -1, 0]}]}
    ops = [{"op": "rotate", "bone": "thigh", "axis": [1, 0, 0], "amount": 0.3, "space": "world"},
           {"op": "ik", "bone": "shin", "target": [0.2, -2.5, 0.4]},
           {"op": "query", "bone": "foot", "get": "absolutePosition"},
           {"op": "setScale", "bone": "foot", "scale": [2, 2, 2]}]
    mesh = {"position": [1, 2, 3], "scaling": [1, -2, 1]}
    d = Daemon("--data-dir", data_dir)
    try:
        st, _ = d.req("PUT", "/v1/skeletons/leg", skel)
        check("PUT leg", st == 201, st)
        st, body = d.req("POST", "/v1/skeletons/leg/ops", {"ops": ops, "mesh": mesh})
        ans = json.loads(body)
        check("POST /ops answers 200 with the version and the queries",
              st == 200 and ans["id"] == "leg" and isinstance(ans["version"], int) and len(ans["queries"]) == 1, body)
        version = ans.get("version", 0)
        want = json.loads(eval_text({"skeleton": skel, "mesh": mesh, "ops": ops + [
            {"op": "evaluate", "output": ["final", "local", "world"]}]}))["results"]
        check("POST /ops queries equal skinner eval's", ans.get("queries") == want[:1], (ans, want[:1]))
        pose = {"output": ["final", "local", "world"], "mesh": mesh}
        st, after = d.req("POST", "/v1/skeletons/leg/pose", pose)
        check("the stored skeleton now poses as skinner eval's history", st == 200 and json.loads(after) == want[1],
              after[:200])
        _, stored = d.req("GET", "/v1/skeletons/leg")
        bad = [({"ops": [{"op": "rotate", "bone": "knee", "axis": [1, 0, 0], "amount": 1}]}, "/ops/0/bone"),
               ({"ops": [ops[0], {"op": "rotate", "bone": "shin", "axis": [0, 0, 0], "amount": 1}]}, "/ops/1/axis"),
               ({"ops": [ops[0]], "mesh": {"scaling": [0, 1, 1]}}, "/mesh"),
               ({"ops": [{"op": "ik", "bone": "thigh", "target": [0, 0, 0]}]}, "/ops/0/bone"),
               ({"ops": [{"op": "ik", "bone": "hip", "target": [0, 0, 0]}]}, "/ops/0/bone"),
               ({"ops": [ops[0], {"op": "twist", "bone": "shin"}]}, "/ops/1/op"),
               ({"ops": [{"op": "translate", "bone": "shin", "vector": [1, "x", 0]}]}, "/ops/0/vector/1"),
               ({"ops": [{"op": "setRotationMatrix", "bone": "shin", "matrix": [1] * 15}]}, "/ops/0/matrix"),
               ({"ops": [ops[0]], "extra": 1}, "/extra")]
        for body, ptr in bad:
            st, ans = d.req("POST", "/v1/skeletons/leg/ops", body)
            p = json.loads(ans) if st != 200 else {}
            check(f"POST /ops {ptr}: 422 problem+json with the pointer", st == 422 and p.get("pointer") == ptr, ans)
        st, ans = d.req("POST", "/v1/skeletons/leg/ops", '{"ops": [{"op": "rotate", "bone": "shin", "axis": [1, 0, 0], "amount": 1e999}]}')
        check("a non-finite number is refused", 400 <= st < 500, (st, ans))
        st, ans = d.req("POST", "/v1/skeletons/leg/ops", {"ops": [{"op": "twist", "bone": "shin"}]})
        check("an unknown op is named", st == 422 and b"twist" in ans, ans)
        check("POST /ops on a missing id is a 404", d.req("POST", "/v1/skeletons/nope/ops", {"ops": []})[0] == 404)
        _, again = d.req("GET", "/v1/skeletons/leg")
        check("refused ops left the stored skeleton unchanged", again == stored)
        check("and its pose", d.req("POST", "/v1/skeletons/leg/pose", pose)[1] == after)
        st, body = d.req("POST", "/v1/skeletons/leg/ops", {"ops": []})
        check("refused ops made no version", st == 200 and json.loads(body)["version"] == version + 1, body)
        version += 1
        # a body of 32 KiB and more is applied on the pool: the same answer as skinner eval's
        big = [{"op": "rotate", "bone": "foot", "axis": [0, 0, 1], "amount": 0.0001}] * 600 + [
            {"op": "query", "bone": "foot", "get": "rotationQuaternion"}]
        st, body = d.req("POST", "/v1/skeletons/leg/ops", {"ops": big})
        want = json.loads(eval_text({"skeleton": skel, "mesh": mesh, "ops": ops + big}))["results"]
        check("a large POST /ops body (pool) answers as skinner eval", st == 200 and
              json.loads(body)["queries"] == want[1:] and json.loads(body)["version"] == version + 1, (st, body[:200]))
        st, after = d.req("POST", "/v1/skeletons/leg/pose", pose)
    finally:
        d.stop()
    d = Daemon("--data-dir", data_dir)
    try:
        check("POST /ops survives a restart", d.req("POST", "/v1/skeletons/leg/pose", pose)[1] == after)
    finally:
        d.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", action="append", default=[], help="gen_ops.mjs cases (a .jsonl with expected)")
    ap.add_argument("--anim", action="append", default=[], help="Babylon-format clip cases, bit for bit")
    ap.add_argument("--layers", action="append", default=[], help="glTF layer cases, bit for bit")
    args = ap.parse_args()
    only = bool(args.ops or args.anim or args.layers)
    conf = os.path.join(DATA, "conformance")
    ops = args.ops if only else [os.path.join(conf, "ops.jsonl"), os.path.join(conf, "ops_mirror.jsonl")]
    anim = args.anim if only else [os.path.join(conf, "anim.jsonl"), os.path.join(conf, "banim_layers.jsonl")]
    layers = args.layers if only else [os.path.join(conf, "layers.jsonl")]
    tmp = tempfile.mkdtemp()
    try:
        d = Daemon("--max-body", str(16 << 20))
        try:
            for path in ops:
                test_generated_cases(d, path, committed=not only)
            for path in anim:
                test_anim_cases(d, path, signed_zero=True)
            for path in layers:
                test_anim_cases(d, path, signed_zero=True)
            if not only:
                test_fox_walk(d)
        finally:
            d.stop()
        if not only:
            test_post_ops(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
