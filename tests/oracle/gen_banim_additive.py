#!/usr/bin/env python3
# Additive layers of Babylon-format clips (tests/conformance/banim_additive.jsonl):
# the skeletons of the pose-only cases of anim.jsonl, two cases each of three poses of
# 1-3 layers, at least one additive ("reference" 0..the clip's duration),
# mixed with weighted layers (weights 0.25..1.5: Animatable.weight clamps),
# 0/1 masks (targetMask), loops, additive-only poses and one frame range,
# answered by babylon_eval.mjs (Skeleton.MakeAnimationAdditive on a separate
# parse of the skeleton, its animations run in an isAdditive animatable,
# beginWeightedAnimation for the others, goToFrame(frame, true), the late
# animation bindings):
#
#   cd tests/oracle && python3 gen_banim_additive.py ../conformance/anim.jsonl |
#       node babylon_eval.mjs --jsonl - ../conformance/banim_additive.jsonl
#
# Clips whose bone animations end before the range does are not made
# additive here (Babylon's createKeyForFrame throws there; skinnerd refuses
# them, tests/check_sk_banim_add.c).
import json, random, sys
rnd = random.Random(1416)
out = []

def first_anims(sk):
    for b in sk["bones"]:
        a = b.get("animation")
        if a:
            yield a

for line in open(sys.argv[1]):
    c = json.loads(line)
    ops = c["case"]["ops"]
    sk = c["case"]["skeleton"]
    if not all(o["op"] == "pose" for o in ops):
        continue
    if any(b.get("animations") for b in sk["bones"]):
        continue
    anims = list(first_anims(sk))
    if not anims:
        continue
    fps = anims[0]["framePerSecond"]
    last = max(a["keys"][-1]["frame"] for a in anims)
    if sk.get("ranges"):
        # one more range ending on the shortest animation's last key, from a
        # key frame or between keys: keys inserted at either end or not
        sk = json.loads(json.dumps(sk))
        t = min(a["keys"][-1]["frame"] for a in anims)
        frames = sorted({k["frame"] for a in anims for k in a["keys"] if k["frame"] <= t})
        f = rnd.choice([rnd.choice(frames), round(rnd.uniform(0, t), 2), 0])
        sk["ranges"].append({"name": "additive_range", "from": f, "to": t})
    ranges = [(r["name"], r["from"], r["to"]) for r in sk.get("ranges", [])] or [("animation0", 0, last)]
    ok = [r for r in ranges if r[1] >= 0 and all(a["keys"][-1]["frame"] >= r[2] for a in anims)]
    if not ok:
        continue
    zero_twice = any(len(a["keys"]) > 1 and a["keys"][1]["frame"] == 0 for a in anims)
    if len(out) >= 120:
        break
    names = [r[0] for r in ranges]
    bones = [b["name"] for b in sk["bones"]]
    def mask():
        a, b = rnd.choice(bones), rnd.choice(bones)
        return rnd.choice([{"bone": a, "subtree": True}, {"include": sorted({a, b})},
                           {"exclude": [a], "subtree": True}, {"weights": {a: 0}, "default": 1}])
    def layer(additive):
        if additive:
            name, fr, to = rnd.choice(ok)
            dur = (to - fr) / fps
            ref = rnd.choice([0, dur, round(rnd.uniform(0, dur), 4)])
            if ref == 0 and zero_twice:
                ref = dur
            l = {"animation": name, "additive": True, "time": round(rnd.uniform(-0.05, 0.5), 4)}
            if ref != 0 or rnd.random() < 0.5:
                l["reference"] = ref
        else:
            l = {"animation": rnd.choice(names), "time": round(rnd.uniform(-0.05, 0.5), 4)}
        w = rnd.choice([None, 0.25, 0.5, 0.7, 1, 1.5])
        if w is not None: l["weight"] = w
        if rnd.random() < 0.25: l["loop"] = True
        if rnd.random() < 0.25: l["mask"] = mask()
        return l
    for rep in range(2):
      nops = []
      for k in range(3):
        kinds = rnd.choice([[True], [False, True], [False, True], [True, True], [False, False, True], [False, True, True]])
        op = {"op": "pose", "layers": [layer(a) for a in kinds]}
        if k == 2:
            op["from"], op["to"], op["fps"] = 0, 0.2, 20
            for l in op["layers"]:
                l["time"] = rnd.choice([0, 0.05])
                l.pop("loop", None)
        if rnd.random() < 0.4: op["output"] = ["final", "local"]
        nops.append(op)
      out.append({"name": "badd-%d %s" % (len(out), c["name"].split(" ")[0]), "case": {"skeleton": sk, "ops": nops}})
for o in out:
    print(json.dumps(o))
