#!/usr/bin/env python3
"""Regenerates proto/examples/: the example skeletons and examples.json.

    python3 proto/examples/gen_examples.py [ROBOT_EXPRESSIVE_GLB]

Not run by the tests (they read the committed files). Needs Node 20+ with
tests/oracle/node_modules installed (cd tests/oracle && npm install): every
expected pose answer in examples.json is what real Babylon.js computes for
the same state, through tests/oracle/babylon_eval.mjs, and the Babylon-format
skeleton is written by Babylon's own Skeleton.serialize().

humanoid-fragment.json is a fragment of the CC0 RobotExpressive model (Tomas
Laulhe / Quaternius, modifications by Don McCurdy): node TRS as glTF stores
them (quaternions, near-unit scales), bind matrices derived from the skin's
inverse bind matrices the way Babylon's glTF loader derives them, the
armature as a bone with no output slot (index -1), bones listed out of order.
Without the .glb argument the committed file is kept.
"""

import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
ORACLE = os.path.join(TOP, "tests", "oracle")


def mat_mul(a, b):
    """Babylon a.multiply(b) on 16-number Matrix.m arrays (row vectors: a then b)."""
    return [sum(a[r * 4 + k] * b[k * 4 + c] for k in range(4)) for r in range(4) for c in range(4)]


def mat_inv(m):
    """Inverse of a 4x4 (Gauss-Jordan, doubles)."""
    a = [[m[r * 4 + c] for c in range(4)] + [1.0 if r == c else 0.0 for c in range(4)] for r in range(4)]
    for col in range(4):
        piv = max(range(col, 4), key=lambda r: abs(a[r][col]))
        a[col], a[piv] = a[piv], a[col]
        p = a[col][col]
        a[col] = [x / p for x in a[col]]
        for r in range(4):
            if r != col:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [a[r][4 + c] for r in range(4) for c in range(4)]


def compose(s, q, t):
    """Babylon Matrix.Compose(scaling, quaternion, translation)."""
    x, y, z, w = q
    xx, yy, zz = x * x, y * y, z * z
    xy, zw, zx, yw, yz, xw = x * y, z * w, z * x, y * w, y * z, x * w
    return [
        (1 - 2 * (yy + zz)) * s[0], 2 * (xy + zw) * s[0], 2 * (zx - yw) * s[0], 0,
        2 * (xy - zw) * s[1], (1 - 2 * (zz + xx)) * s[1], 2 * (yz + xw) * s[1], 0,
        2 * (zx + yw) * s[2], 2 * (yz - xw) * s[2], (1 - 2 * (yy + xx)) * s[2], 0,
        t[0], t[1], t[2], 1,
    ]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def short(x):
    """Shortest decimal that reads back to the same float32 (for compact files)."""
    x = f32(x)
    for digits in range(1, 10):
        s = "%.*g" % (digits, x)
        if f32(float(s)) == x:
            v = float(s)
            return int(v) if v == int(v) and abs(v) < 1e15 else v
    return x


FRAGMENT = [
    "Bone", "Body", "Hips", "Abdomen", "Torso", "Neck", "Head",
    "Shoulder.L", "UpperArm.L", "LowerArm.L", "Shoulder.R", "UpperArm.R", "LowerArm.R",
    "UpperLeg.L", "LowerLeg.L", "UpperLeg.R", "LowerLeg.R",
]
# Listed children first, so the daemon's parent-first sort has work to do.
LISTING = [
    "LowerArm.L", "Head", "UpperLeg.R", "LowerLeg.R", "Hips", "RobotArmature", "Body", "Bone",
    "Abdomen", "Torso", "Neck", "Shoulder.L", "UpperArm.L", "Shoulder.R", "UpperArm.R",
    "LowerArm.R", "UpperLeg.L", "LowerLeg.L",
]


def humanoid_from_glb(path):
    data = open(path, "rb").read()
    jlen = struct.unpack_from("<I", data, 12)[0]
    g = json.loads(data[20:20 + jlen])
    binoff = 20 + jlen + 8
    skin = g["skins"][0]
    acc = g["accessors"][skin["inverseBindMatrices"]]
    view = g["bufferViews"][acc["bufferView"]]
    off = binoff + view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    ibm_all = struct.unpack_from("<%df" % (16 * acc["count"]), data, off)
    nodes = g["nodes"]
    parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}
    # Mesh nodes share names with joints: look names up among the joints.
    by_name = {nodes[j]["name"]: j for j in skin["joints"]}
    by_name["RobotArmature"] = next(i for i, n in enumerate(nodes) if n.get("name") == "RobotArmature")
    joint_ibm = {j: list(ibm_all[16 * k:16 * k + 16]) for k, j in enumerate(skin["joints"])}

    def local(i):
        n = nodes[i]
        if "matrix" in n:
            return list(n["matrix"])
        return compose(n.get("scale", [1, 1, 1]), n.get("rotation", [0, 0, 0, 1]), n.get("translation", [0, 0, 0]))

    bones = {}
    abs_inv_bind = {}
    arm = by_name["RobotArmature"]
    n = nodes[arm]
    # The armature is not a joint: no output slot; bind = its local matrix.
    bones["RobotArmature"] = {"name": "RobotArmature", "parent": None, "position": n["translation"],
                              "rotationQuaternion": n["rotation"], "scaling": n["scale"], "index": -1}
    abs_inv_bind[arm] = mat_inv(local(arm))
    for slot, name in enumerate(FRAGMENT):
        i = by_name[name]
        p = parent[i]
        # Babylon glTF loader (_updateBoneMatrices): bind = inverse(IBM) x parent's absolute inverse bind.
        bind = mat_mul(mat_inv(joint_ibm[i]), abs_inv_bind[p])
        abs_inv_bind[i] = joint_ibm[i]
        n = nodes[i]
        b = {"name": name, "parent": nodes[p]["name"]}
        if "translation" in n:
            b["position"] = [short(v) for v in n["translation"]]
        if "rotation" in n:
            b["rotationQuaternion"] = [short(v) for v in n["rotation"]]
        if "scale" in n and n["scale"] != [1, 1, 1]:
            b["scaling"] = [short(v) for v in n["scale"]]
        b["bind"] = [short(v) for v in bind]
        b["index"] = slot
        bones[name] = b
    return {"bones": [bones[nm] for nm in LISTING]}


def write_json(path, obj, compact_arrays=True):
    text = json.dumps(obj, indent=2)
    if compact_arrays:
        # One line per number array keeps the files readable.
        import re
        text = re.sub(r"\[\s+([-0-9.eE+,\s]+?)\s+\]", lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)
    with open(path, "w") as f:
        f.write(text + "\n")


def node(script, stdin_text):
    r = subprocess.run(["node", "--input-type=module", "-e", script], input=stdin_text, capture_output=True,
                       text=True, cwd=ORACLE, check=True)
    return r.stdout


def babylon_eval(case):
    out = subprocess.run(["node", os.path.join(ORACLE, "babylon_eval.mjs")], input=json.dumps(case),
                         capture_output=True, text=True, cwd=ORACLE, check=True).stdout
    res = json.loads(out)
    if "error" in res:
        raise SystemExit("Babylon rejected a case: %s" % res["error"])
    return res


SERIALIZE_JS = r"""
console.log = (...a) => console.error(...a);
const B = await import("@babylonjs/core");
const { NullEngine, Scene, Skeleton, Bone, Matrix, Vector3, Quaternion } = B;
const scene = new Scene(new NullEngine());
const sk = new Skeleton("babylon-page", "babylon-page", scene);
const body = new Bone("body", sk, null, Matrix.Identity());
const armL = new Bone("armLeft", sk, body,
  Matrix.Compose(Vector3.One(), Quaternion.RotationYawPitchRoll(0, 0, Math.PI / 6), new Vector3(1, 2, 0)));
armL.length = 1.5;
const armR = new Bone("armRight", sk, body,
  Matrix.Compose(Vector3.One(), Quaternion.RotationYawPitchRoll(0, 0, -Math.PI / 6), new Vector3(-1, 2, 0)));
armR.length = 1.5;
// A rest pose different from the bind pose: the left arm lowered.
armL.setRestMatrix(Matrix.Compose(Vector3.One(), Quaternion.RotationYawPitchRoll(0, 0, -Math.PI / 4), new Vector3(1, 2, 0)));
const s = sk.serialize();
for (const b of s.bones) { b.matrix = Array.from(b.matrix); if (b.rest) b.rest = Array.from(b.rest); }
process.stdout.write(JSON.stringify(s));
"""


def main():
    glb = sys.argv[1] if len(sys.argv) > 1 else None
    page_case = json.load(open(os.path.join(HERE, "case-babylon-page.json")))
    page = page_case["skeleton"]
    write_json(os.path.join(HERE, "skeleton-babylon-page.json"), page)
    hpath = os.path.join(HERE, "humanoid-fragment.json")
    if glb:
        write_json(hpath, humanoid_from_glb(glb))
    humanoid = json.load(open(hpath))
    serialized = json.loads(node(SERIALIZE_JS, ""))
    write_json(os.path.join(HERE, "skeleton-babylon-serialized.json"), serialized)

    BIND_R = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -1, 2, 0, 1]
    REST_L = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 2, 0, 1]
    rot75 = 75 * 3.141592653589793 / 180
    pose75 = {"bones": {"armLeft": {"rotation": [0, 0, rot75]}}, "output": ["final", "local"]}
    skin = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5, 0, -2, 1]
    batch3 = [{}, {"bones": {"armLeft": {"rotation": [0, 0, rot75]}}},
              {"bones": {"armRight": {"rotationQuaternion": [0, 0, 0.5, 0.8660254037844386]}, "body": {"position": [0, 1, 0]}},
               "initialSkinMatrix": skin, "output": ["final", "absolute"]}]
    r_page = babylon_eval({"skeleton": page, "ops": [{"op": "pose"}, dict(op="pose", **pose75)] +
                           [dict(op="pose", **p) for p in batch3] +
                           [{"op": "set", "bones": {"armLeft": {"rotation": [0, 0, rot75]}}}, {"op": "pose"},
                            {"op": "returnToRest"}, {"op": "pose"},
                            {"op": "returnToRest", "bone": "armLeft"},
                            {"op": "setBind", "bone": "armRight", "matrix": BIND_R, "keepLocal": True},
                            {"op": "setRest", "bone": "armLeft", "matrix": REST_L}, {"op": "pose"}]})["results"]
    hpose = {"bones": {"UpperArm.L": {"rotationQuaternion": [0, 0, 0.3826834323650898, 0.9238795325112867]},
                       "Neck": {"rotation": [0.2, -0.3, 0]}, "Hips": {"position": [0, -0.0015, -0.0011]}},
             "output": ["final", "absolute", "local"]}
    r_h = babylon_eval({"skeleton": humanoid, "ops": [{"op": "pose"}, dict(op="pose", **hpose)]})["results"]
    r_s = babylon_eval({"skeleton": serialized, "ops": [{"op": "pose"}, {"op": "returnToRest"}, {"op": "pose"}]})["results"]

    ex = []

    def add(**kw):
        ex.append(kw)

    J = {"Content-Type": "application/json"}
    add(name="healthz", method="GET", path="/healthz", status=200, response_schema="health.json",
        response_body={"status": "ok"})
    add(name="readyz", method="GET", path="/readyz", status=200, response_schema="health.json",
        response_body={"status": "ready"})
    add(name="metrics", method="GET", path="/metrics", status=200, response_content_type="text/plain")
    add(name="put-babylon-page", description="The three-bone example of Babylon's 'Bone class internals' page.",
        method="PUT", path="/v1/skeletons/babylon-page", headers=J, body_file="skeleton-babylon-page.json",
        request_schema="skeleton.json", status=201, response_schema="skeleton-created.json",
        response_body={"id": "babylon-page", "bones": 3, "order": ["body", "armLeft", "armRight"],  "slots": [0, 1, 2],
                       "mesh": None})
    add(name="put-babylon-page-again", description="Same id again: replaced, 200.", method="PUT",
        path="/v1/skeletons/babylon-page", headers=J, body_file="skeleton-babylon-page.json",
        request_schema="skeleton.json", status=200, response_schema="skeleton-created.json",
        response_body={"id": "babylon-page", "bones": 3, "order": ["body", "armLeft", "armRight"],  "slots": [0, 1, 2],
                       "mesh": None})
    add(name="get-babylon-page", method="GET", path="/v1/skeletons/babylon-page", status=200,
        response_schema="skeleton-info.json")
    mesh_skel = {"bones": [{"name": "root"}, {"name": "tip", "parent": "root", "position": [0, 1, 0]}],
                 "mesh": {"position": [0, 0, 2], "rotation": [0, 1.5707963267948966, 0], "scaling": [1, 1, -1],
                          "parent": {"scaling": [0.01, 0.01, 0.01]}}}
    add(name="put-with-mesh", description="A default mesh (Babylon's tNode) stored with the skeleton: a node "
        "chain, shown back by the answer and GET, used by world-space ops and outputs when a request names none.",
        method="PUT", path="/v1/skeletons/with-mesh", headers=J, body=mesh_skel, request_schema="skeleton.json",
        status=201, response_schema="skeleton-created.json",
        response_body={"id": "with-mesh", "bones": 2, "order": ["root", "tip"], "slots": [0, 1], "mesh": mesh_skel["mesh"]})
    add(name="pose-bind", description="local = bind: every final matrix is the identity.", method="POST",
        path="/v1/skeletons/babylon-page/pose", headers=J, body={}, request_schema="pose.json", status=200,
        response_schema="result.json", response_body=r_page[0])
    add(name="pose-arm-75deg", description="Left arm to 75 degrees about Z: its final is a 45 degree Z rotation about the shoulder (1, 2, 0).",
        method="POST", path="/v1/skeletons/babylon-page/pose", headers=J, body=pose75, request_schema="pose.json",
        status=200, response_schema="result.json", response_body=r_page[1])
    add(name="pose-arm-75deg-binary", method="POST", path="/v1/skeletons/babylon-page/pose",
        headers=dict(J, Accept="application/octet-stream"), body={"bones": pose75["bones"]},
        request_schema="pose.json", status=200, response_content_type="application/octet-stream",
        response_headers={"Skinner-Bone-Count": "3", "Skinner-Pose-Count": "1", "Skinner-Matrix-Count": "4"},
        response_binary={"layout": "mat4", "poses": 1, "matrices": 4, "finals": [r_page[1]["final"]]})
    add(name="pose-arm-75deg-mat3x4", method="POST", path="/v1/skeletons/babylon-page/pose",
        headers=dict(J, Accept="application/x-skinner-mat3x4"), body={"bones": pose75["bones"]},
        request_schema="pose.json", status=200, response_content_type="application/x-skinner-mat3x4",
        response_headers={"Skinner-Bone-Count": "3", "Skinner-Pose-Count": "1", "Skinner-Matrix-Count": "4"},
        response_binary={"layout": "mat3x4", "poses": 1, "matrices": 4, "finals": [r_page[1]["final"]]})
    add(name="poses-batch", description="Three poses in one request: as stored, the arm at 75 degrees, and a quaternion override plus an initial skin matrix.",
        method="POST", path="/v1/skeletons/babylon-page/poses", headers=J, body={"poses": batch3},
        request_schema="batch.json", status=200, response_schema="batch-result.json",
        response_body={"results": r_page[2:5]})
    add(name="poses-batch-binary", method="POST", path="/v1/skeletons/babylon-page/poses",
        headers=dict(J, Accept="application/octet-stream"),
        body={"poses": [{k: v for k, v in p.items() if k != "output"} for p in batch3]},
        request_schema="batch.json", status=200, response_content_type="application/octet-stream",
        response_headers={"Skinner-Bone-Count": "3", "Skinner-Pose-Count": "3", "Skinner-Matrix-Count": "4"},
        response_binary={"layout": "mat4", "poses": 3, "matrices": 4, "finals": [r["final"] for r in r_page[2:5]]})
    add(name="patch-bones", description="Babylon's setter on the stored skeleton (the eval tool's `set`).",
        method="PATCH", path="/v1/skeletons/babylon-page/bones", headers=J,
        body={"bones": {"armLeft": {"rotation": [0, 0, rot75]}}}, request_schema="bones-patch.json", status=200,
        response_schema="skeleton-info.json")
    add(name="pose-after-patch", method="POST", path="/v1/skeletons/babylon-page/pose", headers=J, body={},
        request_schema="pose.json", status=200, response_schema="result.json", response_body=r_page[5])
    add(name="rest-all", description="returnToRest for the whole skeleton (empty body).", method="POST",
        path="/v1/skeletons/babylon-page/rest", status=200, response_schema="skeleton-info.json")
    add(name="pose-after-rest", method="POST", path="/v1/skeletons/babylon-page/pose", headers=J, body={},
        request_schema="pose.json", status=200, response_schema="result.json", response_body=r_page[6])
    add(name="rest-some", method="POST", path="/v1/skeletons/babylon-page/rest", headers=J,
        body={"bones": ["armLeft"]}, request_schema="rest-request.json", status=200,
        response_schema="skeleton-info.json")
    add(name="patch-bind-keep-local", description="setBind with keepLocal: Babylon's updateMatrix(m, true, false).",
        method="PATCH", path="/v1/skeletons/babylon-page/bones", headers=J,
        body={"bones": {"armRight": {"bind": BIND_R, "keepLocal": True}, "armLeft": {"rest": REST_L}}},
        request_schema="bones-patch.json", status=200, response_schema="skeleton-info.json")
    add(name="pose-after-bind", method="POST", path="/v1/skeletons/babylon-page/pose", headers=J, body={},
        request_schema="pose.json", status=200, response_schema="result.json", response_body=r_page[7])
    add(name="put-humanoid", description="A glTF-like humanoid fragment (RobotExpressive, CC0): quaternions, near-unit scales, bind matrices derived from the skin's inverse bind matrices as Babylon's glTF loader does, the armature (rotation and scale 100) as a bone with index -1, bones listed out of order. At rest every final is about the armature's own transform, as glTF joint matrices are when the mesh is not under the armature.",
        method="PUT", path="/v1/skeletons/robot", headers=J, body_file="humanoid-fragment.json",
        request_schema="skeleton.json", status=201, response_schema="skeleton-created.json")
    add(name="pose-humanoid-rest", method="POST", path="/v1/skeletons/robot/pose", headers=J, body={},
        request_schema="pose.json", status=200, response_schema="result.json", response_body=r_h[0])
    add(name="pose-humanoid", method="POST", path="/v1/skeletons/robot/pose", headers=J, body=hpose,
        request_schema="pose.json", status=200, response_schema="result.json", response_body=r_h[1])
    add(name="put-babylon-serialized", description="What Babylon's Skeleton.serialize() writes, posted as is.",
        method="PUT", path="/v1/skeletons/serialized", headers=J, body_file="skeleton-babylon-serialized.json",
        request_schema="skeleton.json", status=201, response_schema="skeleton-created.json")
    add(name="pose-babylon-serialized", method="POST", path="/v1/skeletons/serialized/pose", headers=J, body={},
        request_schema="pose.json", status=200, response_schema="result.json", response_body=r_s[0])
    add(name="rest-babylon-serialized", method="POST", path="/v1/skeletons/serialized/rest", headers=J, body={},
        request_schema="rest-request.json", status=200, response_schema="skeleton-info.json")
    add(name="pose-babylon-serialized-rest", method="POST", path="/v1/skeletons/serialized/pose", headers=J,
        body={}, request_schema="pose.json", status=200, response_schema="result.json", response_body=r_s[1])
    add(name="post-content-id", description="POST: the id is derived from the content.", method="POST",
        path="/v1/skeletons", headers=J, body_file="skeleton-babylon-page.json", request_schema="skeleton.json",
        status=201, response_schema="skeleton-created.json", response_headers={"Location": True})
    add(name="post-content-id-again", description="Same body, same id.", method="POST", path="/v1/skeletons",
        headers=J, body_file="skeleton-babylon-page.json", request_schema="skeleton.json", status=201,
        response_schema="skeleton-created.json", response_headers={"Location": True}, same_id_as="post-content-id")
    add(name="list", method="GET", path="/v1/skeletons", status=200, response_schema="skeleton-list.json",
        expect_ids=["babylon-page", "robot", "serialized"])
    add(name="delete", method="DELETE", path="/v1/skeletons/serialized", status=204)

    # ---- errors ----
    def err(name, method, path, status, pointer=None, description=None, **kw):
        e = dict(name=name, method=method, path=path, status=status, response_schema="problem.json",
                 response_content_type="application/problem+json")
        if description:
            e["description"] = description
        if pointer is not None:
            e["expect_pointer"] = pointer
        e.update(kw)
        add(**e)

    err("get-deleted", "GET", "/v1/skeletons/serialized", 404, "")
    err("malformed-json", "PUT", "/v1/skeletons/bad", 400, "", headers=J,
        body_text='{"bones": [\n  {"name": "hips",}\n]}\n', expect_line_column=True,
        description="Malformed JSON: 400 with line and column.")
    err("unknown-skeleton", "POST", "/v1/skeletons/no-such-skeleton/pose", 404, "", headers=J, body={})
    err("unknown-bone", "POST", "/v1/skeletons/babylon-page/pose", 404, "/bones/armMiddle", headers=J,
        body={"bones": {"armMiddle": {"position": [0, 0, 0]}}}, request_schema="pose.json")
    err("unknown-bone-patch", "PATCH", "/v1/skeletons/babylon-page/bones", 404, "/bones/leg", headers=J,
        body={"bones": {"armLeft": {"position": [5, 5, 5]}, "leg": {"position": [0, 0, 0]}}},
        request_schema="bones-patch.json", description="All or nothing: armLeft is not changed either.")
    add(name="pose-after-failed-patch", description="All or nothing: the failed PATCH changed nothing.",
        method="POST", path="/v1/skeletons/babylon-page/pose", headers=J, body={}, request_schema="pose.json",
        status=200, response_schema="result.json", response_body=r_page[7])
    err("unknown-route", "GET", "/v2/skeletons", 404)
    err("method-not-allowed", "DELETE", "/v1/skeletons", 405, response_headers={"Allow": True})
    err("method-not-allowed-pose", "GET", "/v1/skeletons/babylon-page/pose", 405, response_headers={"Allow": True})
    err("not-acceptable", "POST", "/v1/skeletons/babylon-page/pose", 406,
        headers=dict(J, Accept="text/html"), body={}, request_schema="pose.json")
    err("unsupported-media-type", "POST", "/v1/skeletons/babylon-page/pose", 415,
        headers={"Content-Type": "text/plain"}, body={}, request_schema="pose.json")
    err("body-too-large", "PUT", "/v1/skeletons/huge", 413, headers=J,
        body_generate={"kind": "padded", "bytes": 300000},
        description="Over --max-body (262144 for these examples).")
    err("batch-too-large", "POST", "/v1/skeletons/babylon-page/poses", 413, headers=J,
        body_generate={"kind": "empty_poses", "count": 65}, request_schema="batch.json",
        description="Over --max-batch (64 for these examples).")
    err("too-many-bones", "PUT", "/v1/skeletons/long-chain", 413, headers=J,
        body_generate={"kind": "chain", "bones": 257}, request_schema="skeleton.json",
        description="Over --max-bones (256 for these examples).")
    err("unknown-key", "PUT", "/v1/skeletons/typo", 422, "/bones/1/postion", headers=J,
        body={"bones": [{"name": "root"}, {"name": "child", "parent": "root", "postion": [0, 1, 0]}]},
        request_schema="skeleton.json", request_schema_valid=False,
        description="A typo must not silently do nothing.")
    err("unknown-key-pose", "POST", "/v1/skeletons/babylon-page/pose", 422, "/bones/armLeft/rotate", headers=J,
        body={"bones": {"armLeft": {"rotate": [0, 0, 1]}}}, request_schema="pose.json", request_schema_valid=False)
    err("singular-mesh", "PUT", "/v1/skeletons/flat", 422, "/mesh", headers=J,
        body={"bones": [{"name": "root"}], "mesh": {"scaling": [1, 0, 1]}}, request_schema="skeleton.json",
        description="A default mesh whose world matrix cannot be inverted (scaling 0): every world-space op inverts it.")
    err("bad-matrix-length", "PUT", "/v1/skeletons/short", 422, "/bones/0/matrix", headers=J,
        body={"bones": [{"name": "root", "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0]}]},
        request_schema="skeleton.json", request_schema_valid=False)
    err("not-finite-float32", "POST", "/v1/skeletons/babylon-page/pose", 422, "/bones/body/position/1",
        headers=J, body={"bones": {"body": {"position": [0, 1e39, 0]}}}, request_schema="pose.json",
        request_schema_valid=False, description="1e39 is infinity as a float32.")
    err("cycle", "PUT", "/v1/skeletons/cycle", 422, headers=J,
        body={"bones": [{"name": "a", "parent": "c"}, {"name": "b", "parent": "a"}, {"name": "c", "parent": "b"}]},
        request_schema="skeleton.json", expect_pointer_prefix="/bones/")
    err("unknown-parent", "PUT", "/v1/skeletons/orphan", 422, "/bones/1/parent", headers=J,
        body={"bones": [{"name": "hips"}, {"name": "spine", "parent": "hip"}]}, request_schema="skeleton.json")
    err("duplicate-name", "PUT", "/v1/skeletons/dup", 422, "/bones/1/name", headers=J,
        body={"bones": [{"name": "hips"}, {"name": "hips"}]}, request_schema="skeleton.json")
    err("singular-bind", "PUT", "/v1/skeletons/singular", 422, "/bones/0/bind", headers=J,
        body={"bones": [{"name": "flat", "bind": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]}]},
        request_schema="skeleton.json", description="Babylon would silently use the singular matrix; skinnerd refuses it.")
    err("both-rotations", "POST", "/v1/skeletons/babylon-page/pose", 422, "/bones/armLeft/rotation", headers=J,
        body={"bones": {"armLeft": {"rotation": [0, 0, 1], "rotationQuaternion": [0, 0, 0, 1]}}},
        request_schema="pose.json", request_schema_valid=False)
    err("bad-output", "POST", "/v1/skeletons/babylon-page/pose", 422, "/output/0", headers=J,
        body={"output": ["skin"]}, request_schema="pose.json", request_schema_valid=False)
    err("bad-id-put", "PUT", "/v1/skeletons/no%20spaces", 400, "", headers=J, body_file="skeleton-babylon-page.json",
        request_schema="skeleton.json", description="PUT with an id outside [A-Za-z0-9._-]{1,128}: it cannot be created.")
    err("bad-id-get", "GET", "/v1/skeletons/no%20spaces", 404, "",
        description="Any other route with such an id: there is no such skeleton.")

    # Babylon-format clips: a skeleton with bone animations and ranges, a
    # clip's detail, poses of it, and a stored copyAnimationRange (the
    # skeletons are the ones of tests/check_routes_anim.c, committed here).
    clips = json.load(open(os.path.join(HERE, "skeleton-babylon-clips.json")))
    source = json.load(open(os.path.join(HERE, "skeleton-babylon-retarget-source.json")))
    target = {"bones": [{"name": "root", "parentBoneIndex": -1, "index": 0, "length": 2,
                         "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]},
                        {"name": "arm", "parentBoneIndex": 0, "index": 1, "length": 3,
                         "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1]}]}
    clip_pose = {"animation": "Wave", "time": 0.1}
    clip_range = {"animation": "Rise", "from": 0, "to": 0.6, "fps": 10}
    r_clip = babylon_eval({"skeleton": clips, "ops": [dict(op="pose", **clip_pose)]})["results"]
    r_range = babylon_eval({"skeleton": clips, "ops": [dict(op="pose", **clip_range)]})["results"]
    r_copy = babylon_eval({"skeleton": target, "ops": [
        {"op": "copyAnimationRange", "from": source, "name": "Rise", "rescale": True},
        {"op": "pose", "animation": "Rise", "time": 0.2}]})["results"]
    add(name="put-babylon-clips", description="Babylon JSON with bone animations (_matrix and position keys) and two "
        "ranges: each range is a clip, listed in the answer.", method="PUT", path="/v1/skeletons/clips", headers=J,
        body_file="skeleton-babylon-clips.json", request_schema="skeleton.json", status=201,
        response_schema="skeleton-created.json")
    add(name="get-clip", description="One clip's animated bones and each channel's key frames.", method="GET",
        path="/v1/skeletons/clips/animations/Rise", status=200, response_schema="clip.json")
    add(name="pose-babylon-clip", method="POST", path="/v1/skeletons/clips/pose", headers=J, body=clip_pose,
        request_schema="pose.json", status=200, response_schema="result.json", response_body=r_clip[0])
    add(name="pose-babylon-clip-range", description="A frame range of a Babylon range: one result per frame.",
        method="POST", path="/v1/skeletons/clips/pose", headers=J, body=clip_range, request_schema="pose.json",
        status=200, response_schema="batch-result.json", response_body={"results": r_range})
    add(name="pose-babylon-clip-frames", description="The same range by frame index: frames [3, 7) at 10 fps are "
        "frames 3..6 of the range from 0 (frame k at k / fps), the bytes whatever the chunk.", method="POST",
        path="/v1/skeletons/clips/pose", headers=J, body={"animation": "Rise", "frames": [3, 7], "fps": 10},
        request_schema="pose.json", status=200, response_schema="batch-result.json",
        response_body={"results": r_range[3:7]})
    err("pose-frames-reversed", "POST", "/v1/skeletons/clips/pose", 422, "/frames/1", headers=J,
        body={"animation": "Rise", "frames": [7, 3], "fps": 10}, request_schema="pose.json")
    clip_speed = {"layers": [{"animation": "Wave", "time": 0, "speedRatio": 1.5, "loop": True}], "from": 0,
                  "to": 0.5, "fps": 10}
    r_speed = babylon_eval({"skeleton": clips, "ops": [dict(op="pose", **clip_speed)]})["results"]
    add(name="pose-babylon-clip-speed", description="A layer at 1.5 times its speed, as AnimationGroup.speedRatio "
        "plays it: frame (ms * (fps * 1.5)) / 1000 of the elapsed time, looping in the range.", method="POST",
        path="/v1/skeletons/clips/pose", headers=J, body=clip_speed, request_schema="pose.json", status=200,
        response_schema="batch-result.json", response_body={"results": r_speed})
    err("pose-speed-short-keys", "POST", "/v1/skeletons/clips/pose", 415, "/layers/0/speedRatio",
        description="The root's keys end before \"Rise\" does: Babylon would play that bone in its own keys' range.",
        headers=J, body={"layers": [{"animation": "Rise", "time": 0, "speedRatio": 2}], "times": [0, 0.5]},
        request_schema="pose.json")
    err("unknown-clip", "GET", "/v1/skeletons/clips/animations/Nope", 404, "")
    add(name="put-retarget-target", description="Babylon JSON without animations: a retarget target.", method="PUT",
        path="/v1/skeletons/target", headers=J, body=target, request_schema="skeleton.json", status=201,
        response_schema="skeleton-created.json")
    add(name="put-retarget-source", method="PUT", path="/v1/skeletons/source", headers=J,
        body_file="skeleton-babylon-retarget-source.json", request_schema="skeleton.json", status=201,
        response_schema="skeleton-created.json")
    add(name="copy-animation-range", description="copyAnimationRange(source, \"Rise\", true) stored on the target.",
        method="POST", path="/v1/skeletons/target/animations", headers=J,
        body={"from": "source", "animation": "Rise", "rescale": True}, request_schema="animation-copy.json",
        status=201, response_schema="clip.json")
    add(name="pose-retargeted", method="POST", path="/v1/skeletons/target/pose", headers=J,
        body={"animation": "Rise", "time": 0.2}, request_schema="pose.json", status=200,
        response_schema="result.json", response_body=r_copy[0])
    err("copy-animation-range-again", "POST", "/v1/skeletons/target/animations", 422, "/animation", headers=J,
        body={"from": "source", "animation": "Rise"}, request_schema="animation-copy.json",
        description="The target has the range now.")

    doc = {
        "description": "Request/response pairs of the skinnerd API v1, sent in this order to one daemon started with daemon_args by tests/proto_examples.py (later examples depend on earlier ones). Regenerate with proto/examples/gen_examples.py; expected pose answers come from real Babylon.js. Fields: body (JSON), body_file (a file in this directory), body_text (raw bytes), body_generate (built by the test); request_schema / request_schema_valid: the request is (or, for 422 examples the schema can catch, is not) valid against that schema; status; response_schema; response_body (compared exactly, numbers within the conformance tolerance); response_headers (value, or true = present); response_binary (raw float32 answers compared with Babylon's finals); expect_pointer / expect_pointer_prefix / expect_line_column for problem+json; same_id_as; expect_ids.",
        "daemon_args": ["--max-body", "262144", "--max-batch", "64", "--max-bones", "256"],
        "examples": ex,
    }
    write_json(os.path.join(HERE, "examples.json"), doc)
    print("wrote %d examples" % len(ex))


if __name__ == "__main__":
    main()
