#!/usr/bin/env python3
# "speedRatio" layers of Babylon-format clips (tests/conformance/banim_speed.jsonl):
# the skeletons of pose-only cases of anim.jsonl whose animations loop by
# CYCLE and hold keys over every range (skinnerd refuses a ratio otherwise:
# animate wraps each animation in its own keys), each with three poses
# of 1-3 weighted layers with ratios 0.25..3 (some layers without one:
# goToFrame), looping or not, single, "times" and a from/to/fps range,
# answered by babylon_eval.mjs (beginWeightedAnimation(.., loop, speedRatio),
# the animatable's clock at the layer time, one scene step):
#
# and the Babylon-format Fox of banim_fox.jsonl with six poses:
#
#   cd tests/oracle && python3 gen_banim_speed.py ../conformance/anim.jsonl ../conformance/banim_fox.jsonl |
#       node babylon_eval.mjs --jsonl - ../conformance/banim_speed.jsonl
import json, random, sys
rnd = random.Random(3434)
out = []
def cycle(sk):
    ranges = sk.get("ranges", [])
    for b in sk["bones"]:
        for a in ([b["animation"]] if "animation" in b else []) + b.get("animations", []):
            if a.get("loopBehavior", 1) != 1:
                return False
            k = a["keys"]
            for r in ranges or [{"from": 0, "to": max(x["frame"] for x in k)}]:
                if k[0]["frame"] > r["from"] or k[-1]["frame"] < r["to"]:
                    return False
    return True
for line in open(sys.argv[1]):
    c = json.loads(line)
    ops = c["case"]["ops"]
    sk = c["case"]["skeleton"]
    if not all(o["op"] == "pose" for o in ops) or not cycle(sk):
        continue
    ranges = [r["name"] for r in sk.get("ranges", [])]
    names = ranges if ranges else ["animation0"]
    if len(out) >= 40:
        break
    def layer():
        l = {"animation": rnd.choice(names), "time": round(rnd.uniform(-0.05, 0.5), 4)}
        w = rnd.choice([None, 0.25, 0.5, 0.7, 1, 1.5])
        if w is not None: l["weight"] = w
        if rnd.random() < 0.5: l["loop"] = True
        if rnd.random() < 0.8: l["speedRatio"] = rnd.choice([0.25, 0.5, 0.9, 1, 1.3, 1.75, 2, 3, 0.37])
        return l
    nops = []
    for k in range(3):
        n = rnd.choice([1, 2, 2, 3])
        op = {"op": "pose", "layers": [layer() for _ in range(n)]}
        if k == 1:
            op["times"] = [0, 0.07, 0.3, 1.1, 2.9]
        if k == 2:
            op["from"], op["to"], op["fps"] = 0, 0.6, 20
            for l in op["layers"]:
                l["time"] = rnd.choice([0, 0.05])
        nops.append(op)
    out.append({"name": "bspeed-%d %s" % (len(out), c["name"].split(" ")[0]), "case": {"skeleton": sk, "ops": nops}})
fox = json.loads(open(sys.argv[2]).readline())["case"]["skeleton"]
w = lambda t, r, **kw: dict({"animation": "Walk", "time": t, "speedRatio": r}, **kw)
fox_ops = [
    {"op": "pose", "layers": [w(0.3, 1.5, loop=True)]},
    {"op": "pose", "layers": [w(0, 1.5, loop=True)], "times": [0, 0.1, 0.37, 0.9, 1.234, 2.5, 3.7]},
    {"op": "pose", "layers": [w(0, 0.8)], "from": 0, "to": 1.6, "fps": 24},
    {"op": "pose", "layers": [w(0, 1.3, loop=True, weight=0.6), w(0.2, 0.7, loop=True, weight=0.4)], "from": 0.2, "to": 1.7, "fps": 30},
    {"op": "pose", "layers": [w(0, 2.25, loop=True), {"animation": "Walk", "time": 0.1, "loop": True}], "from": 0, "to": 1, "fps": 10},
    {"op": "pose", "layers": [w(0.05, 3, loop=True, weight=2), w(0, 0.37, weight=0.5)], "times": [0, 0.4, 1.9]},
]
out.append({"name": "bspeed-fox Babylon-format Fox Walk", "case": {"skeleton": fox, "ops": fox_ops}})
for o in out:
    print(json.dumps(o))
