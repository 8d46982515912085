#!/usr/bin/env python3
# Fox's Walk in Babylon's format with Hermite and with STEP keys
# (tests/conformance/banim_fox_keys.jsonl): tests/data/fox-walk-babylon.json
# with an in- and out-tangent on every key (Vector3 keys [x, y, z, [in],
# [out]], quaternion keys flat [q, in, out]), and with every key's
# interpolation STEP; the poses of banim_fox.jsonl plus a 25-frame range, a
# looping range and a second past the end; answered by babylon_eval.mjs
# (Animation._interpolate's Hermite and STEP branches on a real clip):
#
#   cd tests/oracle && python3 gen_banim_fox_keys.py ../data/fox-walk-babylon.json |
#       node babylon_eval.mjs --jsonl - ../conformance/banim_fox_keys.jsonl
#
# The tangents vary with the key and the component, as fox_variant's in
# tests/check_sk_sample.c (a zero quaternion tangent would count as none).
import json, sys


def variant(skel, kind):
    v = json.loads(json.dumps(skel))
    for b in v["bones"]:
        for a in b.get("animations", []):
            for k, key in enumerate(a["keys"]):
                vals = key["values"]
                w = len(vals)
                tin = [0.01 * (1 + (k + i) % 5) - 0.02 for i in range(w)]
                tout = [-0.015 * (1 + (k * 3 + i) % 7) + 0.05 for i in range(w)]
                if kind == "step":
                    vals += [None, None, 1] if w == 3 else [0] * 8 + [1]
                else:
                    vals += [tin, tout] if w == 3 else tin + tout
    return v


skel = json.load(open(sys.argv[1]))
ops = [{"op": "pose", "animation": "Walk", "times": [0, 0.05, 0.1234, 0.3, 0.5, 0.7, 0.71, 1.3, -0.2],
        "loop": True, "output": ["final", "local"]},
       {"op": "pose", "animation": "Walk", "from": 0, "to": 1, "fps": 24},
       {"op": "pose", "animation": "Walk", "from": 0.4, "to": 2.1, "fps": 7, "loop": True},
       {"op": "pose", "animation": "Walk", "from": 0.65, "to": 1.7, "fps": 4}]
for kind in ("hermite", "step"):
    print(json.dumps({"name": "fox-walk-babylon, %s keys (tests/oracle/gen_banim_fox_keys.py, node "
                      "tests/oracle/babylon_eval.mjs)" % kind, "case": {"skeleton": variant(skel, kind), "ops": ops}}))
