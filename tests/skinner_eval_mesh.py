#!/usr/bin/env python3
"""skinner eval with the mesh outputs ("vertices", "normals", "bounds",
"boundsConservative", "morphWeights", "hits" of the pose's "rays"): a
"pose" op of a glTF case answers the bytes skinnerd answers the same pose
object of the uploaded file, in JSON and as float32 (--format f32 against
application/octet-stream), on a single pose, a from/to/fps range, a
"frames" range, weighted layers, ray hits and Bone-API ops; and the
refusals (an "evaluate" op, a skeleton without a mesh)."""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import Checks  # noqa: E402
from skinnerd_ops import Daemon  # noqa: E402

SKINNER = os.environ.get("SKINNER", "./skinner")
DATA = os.path.abspath(os.path.join(os.environ.get("SK_TEST_DATA", "tests"), "data"))
C = Checks("skinner_eval_mesh")
ALL = ["final", "vertices", "normals", "bounds", "morphWeights", "boundsConservative"]


def eval_case(case, tmp, fmt="json"):
    path = os.path.join(tmp, "case.json")
    json.dump(case, open(path, "w"))
    r = subprocess.run([SKINNER, "eval", "--format", fmt, path], capture_output=True)
    return r.returncode, r.stdout, r.stderr.decode()


def poses_for(asset, clips):
    a, b = clips[0], clips[-1]
    out = [
        ("one pose, every mesh output", {"animation": a, "time": 0.3, "output": ALL}),
        ("a from/to/fps range", {"animation": b, "from": 0, "to": 0.25, "fps": 24, "output": ["vertices", "bounds"]}),
        ("a frames range", {"animation": a, "fps": 30, "frames": [3, 7], "output": ["final", "vertices", "normals",
                                                                                  "morphWeights"]}),
        ("weighted layers", {"layers": [{"animation": a, "time": 0.2, "weight": 0.6},
                                        {"animation": b, "time": 0.7, "weight": 0.4}],
                             "output": ["bounds", "morphWeights", "boundsConservative"]}),
    ]
    rays = [{"origin": [0, 0.5, 100], "direction": [0, 0, -1]}, {"origin": [0, 100, 0], "direction": [0, -1, 0]},
            {"origin": [0, 40, 200], "direction": [0, 0, -1], "maxDistance": 1000}]
    out.append(("ray hits", {"animation": a, "time": 0.3, "output": ["bounds", "hits"], "rays": rays}))
    if asset == "Fox.glb":
        out.append(("Bone-API ops", {"animation": a, "time": 0.5, "output": ["final", "vertices"],
                                     "ops": [{"op": "ik", "bone": "b_LeftLeg02_016", "target": [-4, 30, -50]}]}))
    return out


def main():
    d = Daemon("--max-answer-mb", "256")
    tmp = tempfile.mkdtemp()
    try:
        for asset, clips in (("Fox.glb", [1, 2]), ("skin_morph.glb", [0, 1]), ("RobotExpressive.glb", [3, 6]),
                             ("skin_8inf.glb", [0])):
            sid = asset.split(".")[0]
            st, _ = d.req("PUT", "/v1/skeletons/" + sid, open(os.path.join(DATA, asset), "rb").read(),
                          "model/gltf-binary")
            C.check("%s uploads" % asset, st == 201)
            for what, pose in poses_for(asset, clips):
                st, body = d.req("POST", "/v1/skeletons/%s/pose" % sid, pose)
                case = {"skeleton": {"gltf": os.path.join(DATA, asset)}, "ops": [dict(pose, op="pose")]}
                rc, out, err = eval_case(case, tmp)
                text = out.decode()
                ranged = "from" in pose or "frames" in pose
                text = text.rstrip("\n")
                at = text.find('"results":[')  # {"order": [...], "results": [...]}
                got = ("{" + text[at:] if ranged else text[at + 11:-2]).encode() if rc == 0 and at >= 0 else b""
                C.check("%s, %s: skinner eval's JSON is skinnerd's answer, byte for byte" % (asset, what),
                        st == 200 and rc == 0 and got == body)
                if "rays" in pose and asset == "Fox.glb":
                    C.check("Fox.glb: a ray hits a triangle", b'"triangle":' in got)
                if rc != 0 or got != body:
                    print(" eval rc %d %s; daemon %d %r" % (rc, err.strip(), st, body[:200]), file=sys.stderr)
                if "ops" in pose:
                    continue
                st, body = d.req("POST", "/v1/skeletons/%s/pose" % sid, pose, accept="application/octet-stream")
                rc, out, err = eval_case(case, tmp, "f32")
                C.check("%s, %s: --format f32 is skinnerd's application/octet-stream (%d bytes)" % (asset, what,
                                                                                                 len(body)),
                        st == 200 and rc == 0 and out == body)
        rc, _, err = eval_case({"skeleton": {"gltf": os.path.join(DATA, "Fox.glb")},
                                "ops": [{"op": "evaluate", "output": ["bounds"]}]}, tmp)
        C.check("mesh outputs on \"evaluate\" are refused at the op",
                rc == 2 and 'at "/ops/0": mesh outputs come with a "pose" op' in err)
        rc, _, err = eval_case({"skeleton": {"bones": [{"name": "a"}]},
                                "ops": [{"op": "pose", "output": ["vertices"]}]}, tmp)
        C.check("mesh outputs of a skeleton without a mesh are refused at the output",
                rc == 2 and '"/ops/0/output/0"' in err and "no skinned mesh" in err)
    finally:
        d.stop()
    return C.summary()


if __name__ == "__main__":
    sys.exit(main())
