#!/usr/bin/env python3
"""Writes the generated seed corpora of the fuzz targets into OUT/<target>/.

  make_seeds.py SRCDIR OUT

skeleton: every case's "skeleton" plus the proto/ example skeletons;
eval:     every conformance case (cases.jsonl, handwritten.jsonl);
pose:     every "pose"/"evaluate" op of those cases as a pose body, its
          bone names mapped onto the pose target's fixed skeleton, and the
          same poses grouped into {"poses": [...]} batches;
banim:    every case skeleton in Babylon's format with bone animations or
          ranges, and the "from" skeleton of every copyAnimationRange op;
cost:     the pose seeds again (the cost target uses the pose target's
          clip skeleton);
gltf:     the glTF test files and ../shared/assets/gltf (up to 256 KiB
          each: the mutator gains little from bigger files and slows down).
Hand-made edge cases are committed in tests/fuzz/seeds/<target>/ instead."""
import glob, hashlib, json, os, sys

src, out = sys.argv[1], sys.argv[2]
FIXTURE = ["body", "armLeft", "armRight", "a/b~c", 'h\u00e4nd "q"']
GLTF_MAX = 256 * 1024
counts = {}


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)
    counts[target] = counts.get(target, 0) + 1


def dump(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def is_banim(skel):
    if not isinstance(skel, dict) or not isinstance(skel.get("bones"), list):
        return False
    bones = [b for b in skel["bones"] if isinstance(b, dict)]
    return "ranges" in skel or any("animation" in b or "animations" in b for b in bones)


batch = []
for path in sorted(glob.glob(os.path.join(src, "tests/conformance/*.jsonl"))):
    for line in open(path, encoding="utf-8"):
        if not line.strip():
            continue
        case = json.loads(line)["case"]
        put("eval", dump(case))
        skel = case.get("skeleton")
        for cand in [skel] + [op.get("from") for op in case.get("ops", []) if op.get("op") == "copyAnimationRange"]:
            if is_banim(cand):
                put("banim", dump(cand))
        if not isinstance(skel, dict) or "gltf" in skel:
            continue
        put("skeleton", dump(skel))
        names = [b.get("name") for b in skel.get("bones", [])]
        rename = {n: FIXTURE[i % len(FIXTURE)] for i, n in enumerate(names)}
        for op in case.get("ops", []):
            if op.get("op") not in ("pose", "evaluate"):
                continue
            pose = {k: v for k, v in op.items() if k != "op"}
            if isinstance(pose.get("bones"), dict):
                pose["bones"] = {rename.get(k, k): v for k, v in pose["bones"].items()}
            put("pose", dump(pose))
            put("cost", dump(pose))
            batch.append(pose)
            if len(batch) == 4:
                put("pose", dump({"poses": batch}))
                put("cost", dump({"poses": batch}))
                batch = []

for path in sorted(glob.glob(os.path.join(src, "proto/examples/*.json"))):
    try:
        doc = json.load(open(path, encoding="utf-8"))
    except ValueError:
        continue
    if isinstance(doc, dict) and "bones" in doc:
        put("skeleton", dump(doc))

gltf = set()
for pattern in ("tests/data/*.glb", "tests/data/*.gltf", "tests/data/gltf/*.gltf", "../shared/assets/gltf/*.gl*"):
    gltf.update(glob.glob(os.path.join(src, pattern)))
for path in sorted(gltf):
    if os.path.getsize(path) <= GLTF_MAX:
        put("gltf", open(path, "rb").read())

print("seeds: " + ", ".join(f"{t} {n}" for t, n in sorted(counts.items())))
