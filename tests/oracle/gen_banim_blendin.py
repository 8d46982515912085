#!/usr/bin/env python3
# "blendIn" layers of Babylon-format clips (tests/conformance/banim_blendin.jsonl):
# the skeletons of pose-only cases of anim.jsonl with two ranges or more, each
# with three poses: one layer crossfaded in from another range's pose (or from
# the skeleton as it is), alone or among 1-2 plain weighted layers, over
# "times", a from/to/fps range and a "frames" chunk; and the Babylon-format Fox
# of banim_fox.jsonl (Walk into Walk from another time); answered by
# babylon_eval.mjs (the "from" clip's goToFrame, then beginWeightedAnimation
# per layer, the blended one's Animations with enableBlending and
# blendingSpeed, every frame in order):
#
#   cd tests/oracle && python3 gen_banim_blendin.py ../conformance/anim.jsonl ../conformance/banim_fox.jsonl |
#       node babylon_eval.mjs --jsonl - ../conformance/banim_blendin.jsonl
#
# An optional third argument is the seed (default 3535, the committed file);
# tests/oracle/conformance_anim.sh draws fresh crossfades over fresh skeletons.
import json, random, sys
rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 3535)
out = []
for line in open(sys.argv[1]):
    c = json.loads(line)
    ops = c["case"]["ops"]
    sk = c["case"]["skeleton"]
    if not all(o["op"] == "pose" for o in ops):
        continue
    names = [r["name"] for r in sk.get("ranges", [])]
    if len(names) < 2:
        continue
    if len(out) >= 24:
        break
    def layer(blend, k):
        l = {"animation": rnd.choice(names), "time": 0 if blend else round(rnd.uniform(-0.05, 0.5), 4)}
        w = rnd.choice([None, 0.25, 0.5, 0.7, 1, 1.5])
        if w is not None: l["weight"] = w
        if rnd.random() < 0.5: l["loop"] = True
        if blend:
            speed = rnd.choice([0.1, 0.125, 0.2, 0.3, 0.5] if k == 0 else [0.05, 0.1, 0.125, 0.2, 0.3, 0.5])
            l["blendIn"] = {"speed": speed}
            if rnd.random() < 0.8:
                l["blendIn"]["from"] = {"animation": rnd.choice(names), "time": round(rnd.uniform(0, 0.6), 4)}
                if rnd.random() < 0.5: l["blendIn"]["from"]["loop"] = True
        return l
    nops = []
    for k in range(3):
        n = rnd.choice([1, 1, 2, 3])
        ls = [layer(i == 0, k) for i in range(n)]
        rnd.shuffle(ls)
        op = {"op": "pose", "layers": ls}
        if k == 0:
            op["times"] = [0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3, 1.7, 2.1, 2.5]
        elif k == 1:
            op["from"], op["to"], op["fps"] = 0, 1.2, 20
        else:
            op["fps"], op["frames"] = 30, [5, 40]
        nops.append(op)
    out.append({"name": "bblend-%d %s" % (len(out), c["name"].split(" ")[0]), "case": {"skeleton": sk, "ops": nops}})
fox = json.loads(open(sys.argv[2]).readline())["case"]["skeleton"]
fox_ops = [
    {"op": "pose", "layers": [{"animation": "Walk", "time": 0, "loop": True,
                               "blendIn": {"speed": 0.05, "from": {"animation": "Walk", "time": 0.4}}}],
     "fps": 30, "frames": [0, 60]},
    {"op": "pose", "layers": [{"animation": "Walk", "time": 0.2, "loop": True, "weight": 0.3},
                              {"animation": "Walk", "time": 0, "loop": True, "weight": 0.7,
                               "blendIn": {"speed": 0.1, "from": {"animation": "Walk", "time": 1.1, "loop": True}}}],
     "fps": 30, "frames": [7, 40]},
    {"op": "pose", "layers": [{"animation": "Walk", "time": 0, "blendIn": {"speed": 0.125}}], "from": 0, "to": 1, "fps": 24},
]
out.append({"name": "bblend-fox Babylon-format Fox Walk", "case": {"skeleton": fox, "ops": fox_ops}})
for o in out:
    print(json.dumps(o))
