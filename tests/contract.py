#!/usr/bin/env python3
"""The published contract (proto/) against the daemon's REAL answers.

tests/proto_examples.py sends the committed examples; this test sends every
combination a client can ask for and validates what comes back:

* uploads (JSON, Babylon serialize(), glTF) against skeleton-created.json,
  GET against skeleton-info.json, the list against skeleton-list.json (and
  sorted by id, as openapi.yaml says);
* every non-empty "output" set x single pose / batch / frame range
  ("times" and "from"/"to"/"fps") x JSON, against result.json /
  batch-result.json and the /pose answer schema openapi.yaml publishes;
* binary answers (octet-stream, mat3x4) x single / batch / range: length
  and the Skinner-*-Count headers against openapi.yaml's header schemas,
  and the floats against the JSON answer's;
* "slots": matrix k belongs to the bone whose slot is k, also when slots
  run opposite to "order";
* every error: problem+json (schema, status member = HTTP status):
  unknown and repeated query parameters, trailing slashes, "output": [],
  matrices that overflow float32 (single, batch, range, binary, a
  streamed range), 404, 405, 406, 413, 415, 422;
* content ids compare numbers by value.

Prints `contract: N passed, N failed`; exit 0 or 1 (77 when there is no
daemon binary). Needs python3-jsonschema and python3-yaml.
"""

import itertools
import json
import os
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import proto_examples as pe  # noqa: E402  (the schema loader, HTTP client and daemon helpers)
import yaml  # noqa: E402

DATA = os.path.join(HERE, "data")
passed = failed = 0


def check(what, cond, why=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok - %s" % what)
    else:
        failed += 1
        print("FAIL - %s: %s" % (what, why))


class Client:
    def __init__(self, port, validator, api):
        self.port, self.v, self.api = port, validator, api

    def req(self, method, path, body=None, headers=None, ctype="application/json"):
        h = dict(headers or {})
        raw = None
        if body is not None:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            h.setdefault("Content-Type", ctype)
        return pe.http(self.port, method, path, h, raw)

    def valid(self, what, res, schema, status=200):
        """Checks status, media type and schema of a JSON answer; its value or None."""
        if res.status != status:
            check(what, False, "status %d, expected %d: %s" % (res.status, status, res.body[:300]))
            return None
        if pe.media_type(res) != "application/json":
            check(what, False, "Content-Type %r" % pe.media_type(res))
            return None
        try:
            js = json.loads(res.body)
        except ValueError as e:
            check(what, False, "not JSON: %s" % e)
            return None
        err = pe.first_error(self.v(schema), js)
        check(what, err is None, "%s: %s" % (schema, err))
        return js

    def problem(self, what, res, status, pointer=None, detail_has=None):
        why = []
        if res.status != status:
            why.append("status %d, expected %d: %s" % (res.status, status, res.body[:300]))
        if pe.media_type(res) != "application/problem+json":
            why.append("Content-Type %r" % pe.media_type(res))
        try:
            js = json.loads(res.body)
            err = pe.first_error(self.v("problem.json"), js)
            if err:
                why.append("problem.json: " + err)
            elif js["status"] != res.status:
                why.append("status member %r in a %d answer" % (js["status"], res.status))
            elif pointer is not None and js["pointer"] != pointer:
                why.append("pointer %r, expected %r" % (js["pointer"], pointer))
            elif detail_has is not None and detail_has not in js["detail"]:
                why.append("detail %r lacks %r" % (js["detail"], detail_has))
        except ValueError as e:
            why.append("not JSON: %s" % e)
        check(what, not why, "; ".join(why))

    def pose_schema_ok(self, js):
        """The /pose 200 application/json schema openapi.yaml publishes."""
        sch = self.api["paths"]["/v1/skeletons/{id}/pose"]["post"]["responses"]["200"]["content"]["application/json"]
        refs = [s["$ref"] for s in sch["schema"]["oneOf"]] if "oneOf" in sch["schema"] else [sch["schema"]["$ref"]]
        return any(pe.first_error(self.v(os.path.basename(r)), js) is None for r in refs)

    def binary_headers(self, what, res, route, bones, poses):
        """The Skinner-*-Count headers: present, integers valid against
        openapi.yaml's header schemas, and the right counts."""
        hdrs = self.api["paths"][route]["post"]["responses"]["200"]["headers"]
        why = []
        want = {"Skinner-Bone-Count": bones, "Skinner-Pose-Count": poses, "Skinner-Matrix-Count": bones + 1}
        for name, ref in hdrs.items():
            if name not in want:  # other 200 headers (Skinner-Skeleton-ETag) are not counts
                continue
            sch = pe.resolve_pointer(self.api, ref["$ref"].partition("#")[2])["schema"]
            got = res.header(name)
            if got is None or not got.isdigit():
                why.append("%s: %r" % (name, got))
                continue
            if int(got) < sch.get("minimum", 0) or int(got) != want[name]:
                why.append("%s: %s, expected %d" % (name, got, want[name]))
        check(what, not why, "; ".join(why))


def floats_of(res):
    return struct.unpack("<%df" % (len(res.body) // 4), res.body)


def mat3x4(m):
    return [m[0], m[4], m[8], m[12], m[1], m[5], m[9], m[13], m[2], m[6], m[10], m[14]]


def same_floats(a, b):
    return len(a) == len(b) and all(struct.pack("<f", x) == struct.pack("<f", y) for x, y in zip(a, b))


# ---- the parts -------------------------------------------------------------------------

def uploads(c):
    """Returns {id: (bones, order, slots)} of what it stored."""
    stored = {}
    # Slots opposite to order: a client mapping matrix k to order[k] draws the wrong bones.
    rev = {"bones": [{"name": "a", "position": [1, 0, 0], "index": 2},
                     {"name": "b", "parent": "a", "position": [0, 2, 0], "index": 1},
                     {"name": "c", "parent": "b", "position": [0, 0, 3], "index": 0}]}
    js = c.valid("PUT a JSON skeleton: skeleton-created.json", c.req("PUT", "/v1/skeletons/rev", rev),
                 "skeleton-created.json", 201)
    if js:
        check("upload answer gives each bone's slot", js["order"] == ["a", "b", "c"] and js["slots"] == [2, 1, 0],
              js)
        stored["rev"] = (3, js["order"], js["slots"])
    js = c.valid("PUT it again: 200, skeleton-created.json", c.req("PUT", "/v1/skeletons/rev", rev),
                 "skeleton-created.json", 200)
    with open(os.path.join(pe.EXAMPLES, "skeleton-babylon-serialized.json"), "rb") as f:
        js = c.valid("PUT Babylon serialize(): skeleton-created.json",
                     c.req("PUT", "/v1/skeletons/serialized", f.read()), "skeleton-created.json", 201)
    with open(os.path.join(DATA, "Fox.glb"), "rb") as f:
        glb = f.read()
    js = c.valid("PUT a GLB (?skin=0): skeleton-created.json",
                 c.req("PUT", "/v1/skeletons/fox?skin=0", glb, ctype="model/gltf-binary"),
                 "skeleton-created.json", 201)
    if js:
        stored["fox"] = (js["bones"], js["order"], js["slots"])
        check("GLB slots are a permutation of 0..B-1 (every Fox bone is a joint)",
              sorted(js["slots"]) == list(range(js["bones"])), js["slots"])
    js = c.valid("POST (content id): skeleton-created.json", c.req("POST", "/v1/skeletons", rev),
                 "skeleton-created.json", 201)
    for sid in ["rev", "serialized", "fox"]:
        g = c.valid("GET %s: skeleton-info.json" % sid, c.req("GET", "/v1/skeletons/" + sid), "skeleton-info.json")
        if g:
            check("GET %s: slots equal each bone's index, in order" % sid,
                  g["slots"] == [b["index"] for b in g["bones"]] and g["order"] == [b["name"] for b in g["bones"]])
    g = c.valid("GET fox: its clips are listed", c.req("GET", "/v1/skeletons/fox"), "skeleton-info.json")
    if g:
        check("fox has clips", len(g["animations"]) >= 1, g["animations"])
    lst = c.valid("GET the list: skeleton-list.json", c.req("GET", "/v1/skeletons"), "skeleton-list.json")
    if lst:
        ids = [s["id"] for s in lst["skeletons"]]
        check("the list is sorted by id (openapi.yaml says so)", ids == sorted(ids), ids)
    for path, schema in [("/healthz", "health.json"), ("/readyz", "health.json")]:
        c.valid("GET %s: %s" % (path, schema), c.req("GET", path), schema)
    return stored


def slots_map_matrices(c):
    """Moving bone c (slot 0, order[2]) changes matrix 0 and nothing else."""
    res = c.req("POST", "/v1/skeletons/rev/pose", {"bones": {"c": {"position": [0, 0, 10]}}})
    js = c.valid("pose of rev: result.json", res, "result.json")
    if not js:
        return
    f = js["final"]
    m = [f[16 * k:16 * k + 16] for k in range(4)]
    check("final[slot of c] moved by (0, 0, 7); the others are identity",
          m[0][12:15] == [0, 0, 7] and all(m[k][12:15] == [0, 0, 0] for k in (1, 2, 3)), m)


def output_sets():
    outs = ["final", "absolute", "local"]
    for n in (1, 2, 3):
        for combo in itertools.combinations(outs, n):
            yield list(combo)


def check_result(what, r, outs, bones):
    want = {"final": 16 * (bones + 1), "absolute": 16 * bones, "local": 16 * bones}
    ok = set(r) == set(outs) and all(len(r[k]) == want[k] for k in outs)
    check(what, ok, "keys %s lengths %s" % (sorted(r), {k: len(v) for k, v in r.items()}))


def json_outputs(c, stored):
    bones = stored["fox"][0]
    clip = {"animation": 0}
    modes = [
        ("single", "/pose", lambda o: {"output": o}, None),
        ("single clip pose", "/pose", lambda o: dict(clip, time=0.5, output=o), None),
        ("batch", "/poses", lambda o: {"poses": [{"output": o}, dict(clip, time=0.25, output=o)]}, 2),
        ("range times", "/pose", lambda o: dict(clip, times=[0, 0.1, 0.2], output=o), 3),
        ("range of one frame", "/pose", lambda o: dict(clip, times=[0.3], output=o), 1),
        ("range from/to/fps", "/pose", lambda o: {"animation": 0, "from": 0, "to": 0.5, "fps": 10, "output": o}, 6),
        ("batch with a range item", "/poses", lambda o: {"poses": [dict(clip, times=[0, 0.1], output=o)]}, 2),
    ]
    for outs in output_sets():
        for name, route, body, n in modes:
            what = "%s %s output=%s" % (route, name, ",".join(outs))
            res = c.req("POST", "/v1/skeletons/fox" + route, body(outs))
            schema = "result.json" if n is None else "batch-result.json"
            js = c.valid(what + ": " + schema, res, schema)
            if js is None:
                continue
            if route == "/pose":
                check(what + ": valid against openapi's /pose answer", c.pose_schema_ok(js))
            results = [js] if n is None else js["results"]
            check(what + ": %s results" % (n or 1), len(results) == (n or 1), len(results))
            for i, r in enumerate(results[:2]):
                check_result("%s: result %d has exactly %s" % (what, i, outs), r, outs, bones)


def binary_outputs(c, stored):
    bones = stored["fox"][0]
    cases = [
        ("single", "/v1/skeletons/{id}/pose", {"animation": 0, "time": 0.5}, 1),
        ("batch", "/v1/skeletons/{id}/poses", {"poses": [{}, {"animation": 0, "time": 0.25}, {}]}, 3),
        ("range times", "/v1/skeletons/{id}/pose", {"animation": 0, "times": [0, 0.1, 0.2, 0.3]}, 4),
        ("range from/to/fps", "/v1/skeletons/{id}/pose", {"animation": 0, "from": 0, "to": 1, "fps": 30}, 31),
        ("empty batch", "/v1/skeletons/{id}/poses", {"poses": []}, 0),
    ]
    for name, route, body, n in cases:
        path = route.replace("{id}", "fox")
        jres = c.req("POST", path, body)
        try:
            jjs = json.loads(jres.body)
            finals = [jjs["final"]] if "final" in jjs else [r["final"] for r in jjs["results"]]
        except (ValueError, KeyError) as e:
            check("%s: JSON answer for comparison" % name, False, e)
            continue
        for accept, per in [("application/octet-stream", 16), ("application/x-skinner-mat3x4", 12)]:
            what = "%s %s as %s" % (route, name, accept)
            res = c.req("POST", path, body, {"Accept": accept})
            if res.status != 200 or pe.media_type(res) != accept:
                check(what, False, "status %d, %s" % (res.status, pe.media_type(res)))
                continue
            check(what + ": %d bytes" % (4 * per * (bones + 1) * n), len(res.body) == 4 * per * (bones + 1) * n,
                  len(res.body))
            c.binary_headers(what + ": Skinner-*-Count headers (Pose-Count %d)" % n, res, route, bones, n)
            want = []
            for fin in finals:
                for k in range(bones + 1):
                    m = fin[16 * k:16 * k + 16]
                    want += m if per == 16 else mat3x4(m)
            check(what + ": the JSON answer's floats", same_floats(floats_of(res), want))
        res = c.req("POST", path, dict(body, output=["absolute"]) if "poses" not in body else
                    {"poses": [dict(p, output=["final", "local"]) for p in body["poses"]]},
                    {"Accept": "application/octet-stream"})
        if n > 0:
            c.problem("%s %s binary asking for absolute/local: 422" % (route, name), res, 422)


def post_until_close(c, body, headers=""):
    """POST `body` to Fox's /poses on a raw socket and read until the server
    closes (or resets): what arrived, cut short or not."""
    import socket
    s = socket.create_connection(("127.0.0.1", c.port), timeout=30)
    s.sendall(("POST /v1/skeletons/fox/poses HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers +
               "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)).encode() + body)
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def errors(c, stored):
    order = stored["rev"][1]
    c.problem("unknown query parameter ?skn=1: 400 naming it",
              c.req("POST", "/v1/skeletons/rev/pose?skn=1", {}), 400, "", '"skn"')
    c.problem("unknown query parameter on GET: 400", c.req("GET", "/v1/skeletons?x"), 400, "", '"x"')
    c.problem("repeated query parameter ?skin=0&skin=1: 400",
              c.req("PUT", "/v1/skeletons/rev2?skin=0&skin=1", {"bones": [{"name": "a"}]}), 400, "", '"skin"')
    c.problem("?skin on a JSON pose route: 400", c.req("POST", "/v1/skeletons/fox/pose?skin=0", {}), 400, "",
              '"skin"')
    c.problem("/v1/skeletons/ (trailing slash): 404 saying where", c.req("GET", "/v1/skeletons/"), 404, "",
              "use /v1/skeletons")
    c.problem("/v1/skeletons/rev/ (trailing slash): 404 saying where", c.req("GET", "/v1/skeletons/rev/"), 404, "",
              "use /v1/skeletons/rev")
    c.problem("/v1/skeletons/rev/pose/ (trailing slash): 404", c.req("POST", "/v1/skeletons/rev/pose/", {}), 404, "",
              "use /v1/skeletons/rev/pose")
    c.problem('"output": [] at /pose: 422 at /output', c.req("POST", "/v1/skeletons/rev/pose", {"output": []}), 422,
              "/output")
    c.problem('"output": [] in a batch: 422 at /poses/1/output',
              c.req("POST", "/v1/skeletons/rev/poses", {"poses": [{}, {"output": []}]}), 422, "/poses/1/output")
    c.problem('"output": [] in a range: 422 at /output',
              c.req("POST", "/v1/skeletons/fox/pose", {"animation": 0, "times": [0, 1], "output": []}), 422, "/output")
    big = {"scaling": [3e38, 3e38, 3e38]}
    over = {"bones": {"a": big, "b": big}}
    c.problem("overflow to inf from finite input: 422 naming the bone",
              c.req("POST", "/v1/skeletons/rev/pose", over), 422, "/bones/b", '"b"')
    c.problem("overflow, binary: 422 naming the bone",
              c.req("POST", "/v1/skeletons/rev/pose", over, {"Accept": "application/octet-stream"}), 422, "/bones/b")
    c.problem("overflow, absolute only: 422",
              c.req("POST", "/v1/skeletons/rev/pose", dict(over, output=["absolute"])), 422, "/bones/b")
    turn = [{"op": "rotate", "bone": "b", "axis": [0, 1, 0], "amount": 0.5}]
    c.problem("overflow with Bone-API ops: 422 naming the bone, not null",
              c.req("POST", "/v1/skeletons/rev/pose", dict(over, ops=turn)), 422, "/bones/b", '"b"')
    c.problem("overflow with ops, binary: 422, not NaN",
              c.req("POST", "/v1/skeletons/rev/pose", dict(over, ops=turn), {"Accept": "application/octet-stream"}),
              422, "/bones/b")
    c.problem("overflow with ops in a batch: 422 under /poses/1",
              c.req("POST", "/v1/skeletons/rev/poses", {"poses": [{}, dict(over, ops=turn)]}), 422,
              "/poses/1/bones/b")
    c.problem("overflow in the world output only: 422",
              c.req("POST", "/v1/skeletons/rev/pose", {"bones": {"a": {"position": [1e38, 0, 0]}},
                                                       "output": ["final", "world"],
                                                       "mesh": {"scaling": [1e10, 1e10, 1e10]}}), 422)
    c.problem("overflow in a batch (kernel): 422 under /poses/2",
              c.req("POST", "/v1/skeletons/rev/poses", {"poses": [{}, {}, over]}), 422, "/poses/2/bones/b")
    c.problem("overflow in a binary batch: 422 under /poses/1",
              c.req("POST", "/v1/skeletons/rev/poses", {"poses": [{}, over]}, {"Accept": "application/octet-stream"}),
              422, "/poses/1/bones/b")
    fo = stored["fox"][1]
    fover = {fo[0]: big, fo[1]: big}
    c.problem("overflow in a frame range: 422",
              c.req("POST", "/v1/skeletons/fox/pose", {"animation": 0, "times": [0, 0.5], "bones": fover}), 422)
    c.problem("overflow in a streamed frame range (> 1 MiB): 422 before the status",
              c.req("POST", "/v1/skeletons/fox/pose", {"animation": 0, "from": 0, "to": 10, "fps": 60,
                                                       "bones": fover}), 422)
    stream_cut_short(c, fover)
    stream_cut_short_binary(c, fover)
    c.problem("unknown skeleton: 404", c.req("POST", "/v1/skeletons/nope/pose", {}), 404)
    c.problem("unknown bone: 404", c.req("POST", "/v1/skeletons/rev/pose", {"bones": {"zz": {}}}), 404,
              "/bones/zz")
    c.problem("method not allowed: 405", c.req("DELETE", "/v1/skeletons"), 405)
    c.problem("not acceptable: 406", c.req("POST", "/v1/skeletons/rev/pose", {}, {"Accept": "text/html"}), 406)
    c.problem("unsupported media type: 415",
              c.req("POST", "/v1/skeletons/rev/pose", b"{}", ctype="text/plain"), 415)
    c.problem("body over --max-body: 413",
              c.req("PUT", "/v1/skeletons/huge", b'{"bones":[]}' + b" " * 300000), 413)
    c.problem("malformed JSON: 400 with line and column", c.req("PUT", "/v1/skeletons/bad", b"{"), 400)
    c.problem("unknown key: 422 naming it",
              c.req("POST", "/v1/skeletons/rev/pose", {"bones": {"a": {"postion": [0, 0, 0]}}}), 422,
              "/bones/a/postion")
    assert order  # (rev stored: the errors above are about the request, not a missing skeleton)


def stream_cut_short(c, fover):
    """A streamed batch (> 1 MiB of JSON) whose last pose overflows, past the
    first slice: the 200 is out, so the answer is cut short (no last chunk)
    rather than carrying a null; the same batch without it ends properly."""
    for bad in (False, True):
        poses = [{"animation": 0, "time": i / 100} for i in range(300)]
        if bad:
            poses[-1]["bones"] = fover
        body = json.dumps({"poses": poses}).encode()
        data = post_until_close(c, body)
        head = data.split(b"\r\n", 1)[0]
        chunked = b"transfer-encoding: chunked" in data.split(b"\r\n\r\n", 1)[0].lower()
        ended = data.endswith(b"\r\n0\r\n\r\n")
        if bad:
            check("streamed batch overflowing past its first slice: 200, then cut short, no null",
                  head.endswith(b"200 OK") and chunked and not ended and b"null" not in data,
                  "%r, %d bytes, chunked %s, ended %s" % (head, len(data), chunked, ended))
        else:
            check("the same streamed batch without the overflow ends properly",
                  head.endswith(b"200 OK") and chunked and ended, "%r, %d bytes" % (head, len(data)))


def stream_cut_short_binary(c, fover):
    """The same for a streamed binary batch (> 1 MiB: 700 Fox poses of 25
    float32 matrices), written by the kernel straight into the server's
    send buffer: an overflow in the last pose cuts the body short of its
    Content-Length, and what arrived holds no NaN or inf."""
    import math
    import struct
    for bad in (False, True):
        poses = [{"animation": 0, "time": i / 100} for i in range(700)]
        if bad:
            poses[-1]["bones"] = fover
        body = json.dumps({"poses": poses}).encode()
        data = post_until_close(c, body, "Accept: application/octet-stream\r\n")
        head, _, payload = data.partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        length = next((int(h.split(b":", 1)[1]) for h in head.split(b"\r\n")
                       if h.lower().startswith(b"content-length:")), -1)
        whole = len(payload) - len(payload) % 4
        finite = all(math.isfinite(x) for x in struct.unpack("<%df" % (whole // 4), payload[:whole]))
        if bad:
            check("streamed binary batch overflowing past its first slice: 200, then short of its length, no NaN",
                  status.endswith(b"200 OK") and length == 700 * 25 * 64 and len(payload) < length and finite,
                  "%r, %d of %d bytes, finite %s" % (status, len(payload), length, finite))
        else:
            check("the same streamed binary batch without the overflow is whole",
                  status.endswith(b"200 OK") and len(payload) == length == 700 * 25 * 64 and finite,
                  "%r, %d of %d bytes" % (status, len(payload), length))


def content_ids(c):
    a = b'{"bones":[{"name":"r","position":[1.0,2,3]}]}'
    b = b'{"bones": [{"position": [1, 2.0, 3e0], "name": "r"}]}'
    ja = c.valid("POST [1.0,2,3]", c.req("POST", "/v1/skeletons", a), "skeleton-created.json", 201)
    jb = c.valid("POST [1,2.0,3e0]", c.req("POST", "/v1/skeletons", b), "skeleton-created.json", 201)
    if ja and jb:
        check("content ids compare numbers by value", ja["id"] == jb["id"], (ja["id"], jb["id"]))


def main():
    schemas = pe.load_schemas()
    validator = pe.make_validator_factory(schemas)
    with open(os.path.join(pe.PROTO, "openapi.yaml")) as f:
        api = yaml.safe_load(f)
    desc = api["components"]["headers"]["Skinner-Pose-Count"]["description"]
    check("openapi: Skinner-Pose-Count is documented as the frames of a range", "range" in desc, desc)
    binary = os.environ.get("SKINNERD", "./skinnerd")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print("# SKIP: %s not found (set SKINNERD)" % binary)
        return 77
    log = tempfile.TemporaryFile()
    p = None
    try:
        p, port = pe.start_daemon(binary, ["--max-body", "262144"], log)
        c = Client(port, validator, api)
        stored = uploads(c)
        if "rev" in stored and "fox" in stored:
            slots_map_matrices(c)
            json_outputs(c, stored)
            binary_outputs(c, stored)
            errors(c, stored)
        content_ids(c)
    except (RuntimeError, OSError, IOError) as e:
        check("the daemon answers", False, e)
    finally:
        if p is not None:
            why = pe.stop_daemon(p)
            check("skinnerd exits 0 on SIGTERM", why is None, why)
        if failed:
            log.seek(0)
            tail = log.read()[-2000:].decode("utf-8", "replace")
            if tail:
                print("# skinnerd stderr (tail):\n" + "\n".join("#   " + line for line in tail.splitlines()))
        log.close()
    print("contract: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
