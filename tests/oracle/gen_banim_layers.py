#!/usr/bin/env python3
# Weighted-layer cases of Babylon-format clips (tests/conformance/banim_layers.jsonl):
# the skeletons of the first 60 pose-only cases of anim.jsonl, each with three
# poses of 1-3 weighted layers (weights 0.25..2, default 1, some over 1 to
# check Animatable.weight's clamp; loop; 0/1 masks as targetMask; one frame
# range), answered by
# babylon_eval.mjs (beginWeightedAnimation + goToFrame(frame, true) + the
# late animation bindings):
#
#   cd tests/oracle && python3 gen_banim_layers.py ../conformance/anim.jsonl |
#       node babylon_eval.mjs --jsonl - ../conformance/banim_layers.jsonl
#
# An optional second argument is the seed (default 1415, the committed file);
# tests/oracle/conformance_anim.sh draws fresh layers over fresh skeletons.
import json, random, sys
rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1415)
out = []
for line in open(sys.argv[1]):
    c = json.loads(line)
    ops = c["case"]["ops"]
    sk = c["case"]["skeleton"]
    if not all(o["op"] == "pose" for o in ops):
        continue
    ranges = [r["name"] for r in sk.get("ranges", [])]
    names = ranges if ranges else ["animation0"]
    if len(out) >= 60:
        break
    def layer():
        l = {"animation": rnd.choice(names), "time": round(rnd.uniform(-0.05, 0.5), 4)}
        w = rnd.choice([None, 0.25, 0.5, 0.7, 1, 1.5, 2])
        if w is not None: l["weight"] = w
        if rnd.random() < 0.3: l["loop"] = True
        if rnd.random() < 0.3:  # skinnerd's 0/1 masks, Babylon's targetMask
            bones = [b["name"] for b in sk["bones"]]
            a, b = rnd.choice(bones), rnd.choice(bones)
            l["mask"] = rnd.choice([{"bone": a, "subtree": True}, {"include": sorted({a, b})},
                                    {"exclude": [a], "subtree": True}, {"weights": {a: 0}, "default": 1},
                                    {"bone": a, "weights": {b: 1}}])
        return l
    nops = []
    for k in range(3):
        n = rnd.choice([1, 2, 2, 3])
        op = {"op": "pose", "layers": [layer() for _ in range(n)]}
        if k == 2:
            op["from"], op["to"], op["fps"] = 0, 0.2, 20
            for l in op["layers"]:
                l["time"] = rnd.choice([0, 0.05])
                l.pop("loop", None)
        if rnd.random() < 0.4: op["output"] = ["final", "local"]
        nops.append(op)
    out.append({"name": "blayers-%d %s" % (len(out), c["name"].split(" ")[0]), "case": {"skeleton": sk, "ops": nops}})
for o in out:
    print(json.dumps(o))
