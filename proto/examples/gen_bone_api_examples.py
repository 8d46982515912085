#!/usr/bin/env python3
"""Regenerates proto/examples/bone-api.json: an example of every Bone-API op,
query and output over HTTP (issue 13), run by tests/proto_examples.py after
examples.json.

    python3 proto/examples/gen_bone_api_examples.py [SKINNER]

Every expected body is `skinner eval`'s answer to the same history (default
./skinner), which tests/check_sk_ops holds to Babylon.js bit for bit on 300
generated cases and tests/skinnerd_bone_api.py holds the daemon to.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKINNER = sys.argv[1] if len(sys.argv) > 1 else "./skinner"

# A leg with a bone that has no output slot (index -1) and a second root.
LEG = {"bones": [
    {"name": "hip", "index": 0, "position": [0, 1, 0], "length": 0.2},
    {"name": "thigh", "index": 1, "parent": "hip", "position": [0.1, -0.1, 0], "rotation": [0, 0, 0.1], "length": 0.45},
    {"name": "shin", "index": 2, "parent": "thigh", "position": [0, -0.45, 0], "length": 0.42},
    {"name": "foot", "index": 3, "parent": "shin", "position": [0, -0.42, 0], "scaling": [1, 1.2, 0.9], "length": 0.15},
    {"name": "toe", "index": -1, "parent": "foot", "position": [0, -0.1, 0.12]},
    {"name": "prop", "index": 4, "position": [0.5, 0.5, 0.5]}]}
MESH = {"position": [1, 0, -2], "rotation": [0, 0.5, 0], "scaling": [1, 1, -1]}
ID = "bone-leg"
P = "/v1/skeletons/%s" % ID
OUT = ["final", "world", "positions"]


def q(bone, get, **kw):
    return dict({"op": "query", "bone": bone, "get": get}, **kw)


# One pose example per op, each followed by a read-back.
OPS = {
    "translate": [{"op": "translate", "bone": "shin", "vector": [0, 0.1, 0.05], "space": "world"}, q("foot", "absolutePosition")],
    "setPosition": [{"op": "setPosition", "bone": "foot", "position": [0.1, -0.4, 0]}, q("foot", "position", space="world")],
    "setAbsolutePosition": [{"op": "setAbsolutePosition", "bone": "foot", "position": [1.2, 0.3, -1.9]}, q("foot", "absolutePosition")],
    "scale": [{"op": "scale", "bone": "thigh", "scale": [1, 1.1, 1], "scaleChildren": True}, q("shin", "scale")],
    "setScale": [{"op": "setScale", "bone": "foot", "scale": [1.5, 1.5, 1.5]}, q("foot", "scale")],
    "setYawPitchRoll": [{"op": "setYawPitchRoll", "bone": "thigh", "yaw": 0.2, "pitch": -0.4, "roll": 0.1, "space": "world"},
                        q("thigh", "rotation", space="world")],
    "rotate": [{"op": "rotate", "bone": "thigh", "axis": [1, 0, 0], "amount": -0.6, "space": "world", "mesh": None},
               q("thigh", "rotationQuaternion", space="world", mesh=None)],
    "setAxisAngle": [{"op": "setAxisAngle", "bone": "shin", "axis": [1, 0, 0], "angle": 0.9}, q("shin", "rotationQuaternion")],
    "setRotation": [{"op": "setRotation", "bone": "hip", "rotation": [0, 0.3, 0], "space": "world"}, q("hip", "rotation", space="world")],
    "setRotationQuaternion": [{"op": "setRotationQuaternion", "bone": "shin", "quaternion": [0.2, 0, 0, 0.98]},
                              q("shin", "rotationMatrix")],
    "setRotationMatrix": [{"op": "setRotationMatrix", "bone": "foot", "matrix": [1, 0, 0, 0, 0, 0.8, 0.6, 0, 0, -0.6, 0.8, 0, 0, 0, 0, 1],
                           "space": "world"}, q("foot", "direction", axis=[0, 0, 1])],
    "setCurrentPoseAsRest": [{"op": "rotate", "bone": "shin", "axis": [1, 0, 0], "amount": 0.5},
                             {"op": "setCurrentPoseAsRest", "bone": "shin"}, q("shin", "rotation")],
    "ik": [{"op": "ik", "bone": "shin", "target": [1.1, 0.35, -1.8], "poleTarget": [1, 0.6, -3]}, q("foot", "absolutePosition")],
    "lookAt": [{"op": "lookAt", "bone": "foot", "target": [1, 0, 0], "maxYaw": 0.5, "upAxis": [0, 0, 1]}, q("foot", "direction", axis=[0, 1, 0])],
    "queries": [q("foot", "absolutePositionFromLocal", point=[0, -0.1, 0]), q("foot", "localPositionFromAbsolute", point=[1, 0, -2]),
                q("toe", "position", space="local"), q("prop", "absolutePosition", mesh=None)],
}


def eval_results(case):
    r = subprocess.run([SKINNER, "eval"], input=json.dumps(case).encode(), capture_output=True, check=True)
    return json.loads(r.stdout)["results"]


def pose_case(body, skel=LEG):
    return {"skeleton": skel, "ops": [dict(body, op="pose")]}


def main():
    ex = [{"name": "bone-put-leg", "method": "PUT", "path": P, "body": LEG, "request_schema": "skeleton.json",
           "status": 201, "response_schema": "skeleton-created.json"}]
    for name, ops in OPS.items():
        body = {"ops": ops, "mesh": MESH, "output": OUT}
        ex.append({"name": "bone-pose-" + name, "method": "POST", "path": P + "/pose", "body": body,
                   "request_schema": "pose.json", "status": 200, "response_schema": "result.json",
                   "response_body": eval_results(pose_case(body))[0]})
    body = {"output": ["world", "positions"], "mesh": MESH}
    ex.append({"name": "bone-pose-world-positions", "method": "POST", "path": P + "/pose", "body": body,
               "request_schema": "pose.json", "status": 200, "response_schema": "result.json",
               "response_body": eval_results(pose_case(body))[0]})
    batch = {"poses": [{"ops": OPS["ik"], "mesh": MESH, "output": ["positions"]},
                       {"bones": {"shin": {"rotation": [0.5, 0, 0]}}, "ops": OPS["lookAt"], "mesh": None}]}
    ex.append({"name": "bone-poses-batch", "method": "POST", "path": P + "/poses", "body": batch,
               "request_schema": "batch.json", "status": 200, "response_schema": "batch-result.json",
               "response_body": {"results": eval_results({"skeleton": LEG, "ops": [dict(p, op="pose") for p in batch["poses"]]})}})
    ex.append({"name": "bone-pose-binary", "description": "Binary: per pose the (B+1) final matrices, then B world matrices, then B x 3 positions (proto/bone-api.md).",
               "method": "POST", "path": P + "/pose", "headers": {"Accept": "application/octet-stream"},
               "body": {"ops": OPS["ik"][:1], "mesh": MESH, "output": ["world", "positions"]}, "request_schema": "pose.json",
               "status": 200, "response_content_type": "application/octet-stream",
               "response_headers": {"Skinner-Bone-Count": "6", "Skinner-Matrix-Count": "7"}})
    stored = [{"op": "ik", "bone": "shin", "target": [1.1, 0.35, -1.8]}, q("foot", "absolutePosition"),
              {"op": "setScale", "bone": "prop", "scale": [2, 2, 2]}]
    ex.append({"name": "bone-post-ops", "method": "POST", "path": P + "/ops", "body": {"ops": stored, "mesh": MESH},
               "request_schema": "ops-request.json", "status": 200, "response_schema": "ops-result.json"})
    after = eval_results({"skeleton": LEG, "mesh": MESH, "ops": stored + [{"op": "evaluate", "output": OUT}]})[1]
    ex.append({"name": "bone-pose-after-ops", "method": "POST", "path": P + "/pose", "body": {"output": OUT, "mesh": MESH},
               "request_schema": "pose.json", "status": 200, "response_schema": "result.json", "response_body": after})
    bad = [("bone-ops-unknown-bone", {"ops": [{"op": "rotate", "bone": "knee", "axis": [1, 0, 0], "amount": 1}]}, "/ops/0/bone"),
           ("bone-ops-zero-axis", {"ops": [{"op": "rotate", "bone": "shin", "axis": [0, 0, 0], "amount": 1}]}, "/ops/0/axis"),
           ("bone-ops-singular-mesh", {"ops": [], "mesh": {"scaling": [1, 0, 1]}}, "/mesh"),
           ("bone-ops-non-finite", {"ops": [], "mesh": {"scaling": [1e300, 1, 1]}}, "/mesh/scaling/0"),
           ("bone-ops-ik-no-parent", {"ops": [{"op": "ik", "bone": "hip", "target": [0, 0, 0]}]}, "/ops/0/bone"),
           ("bone-ops-ik-no-pole", {"ops": [{"op": "ik", "bone": "thigh", "target": [0, 0, 0]}]}, "/ops/0/bone"),
           ("bone-ops-unknown-op", {"ops": [{"op": "twist", "bone": "shin"}]}, "/ops/0/op")]
    for name, body, ptr in bad:
        ex.append({"name": name, "method": "POST", "path": P + "/ops", "headers": {"Content-Type": "application/json"},
                   "body": body, "status": 422, "response_schema": "problem.json", "expect_pointer": ptr})
    ex.append({"name": "bone-pose-op-unknown-bone", "method": "POST", "path": P + "/pose",
               "body": {"ops": [q("knee", "position")]}, "status": 422, "response_schema": "problem.json",
               "expect_pointer": "/ops/0/bone"})
    ex.append({"name": "bone-pose-after-refused-ops", "description": "Refused ops stored nothing.", "method": "POST",
               "path": P + "/pose", "body": {"output": OUT, "mesh": MESH}, "status": 200, "response_schema": "result.json",
               "response_body": after})
    for e in ex:
        if "body" in e:
            e["headers"] = dict({"Content-Type": "application/json"}, **e.get("headers", {}))
    doc = {"description": "Babylon's Bone API over HTTP (issue 13): run by tests/proto_examples.py after examples.json, "
                          "same daemon. Regenerate with proto/examples/gen_bone_api_examples.py.", "examples": ex}
    with open(os.path.join(HERE, "bone-api.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
