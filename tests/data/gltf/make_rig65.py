#!/usr/bin/env python3
"""Writes tests/data/gltf/rig65.gltf: a 65-joint skin (a root with four
chains of 16 joints) on one skinned triangle, with a 2-second clip "Wave"
(LINEAR rotations on every joint, 61 keys at 30 fps, plus a root
translation): the 65-bone clip of `skinner bench --clips` and
`make bench-clips`. "WaveCubic" and "WaveStep" are the same motion as
CUBICSPLINE (tangents: the motion's derivative) and STEP channels, for the
sampler's groups of those kinds. Deterministic; run from anywhere."""
import base64
import json
import math
import os
import struct

CHAINS, LINKS, KEYS, FPS = 4, 16, 61, 30.0
joints = 1 + CHAINS * LINKS
buf = bytearray()


def add(data, align=4):
    while len(buf) % align:
        buf.append(0)
    off = len(buf)
    buf.extend(data)
    return off


views, accessors = [], []


def accessor(data, ctype, count, atype, minv=None, maxv=None):
    off = add(data)
    views.append({"buffer": 0, "byteOffset": off, "byteLength": len(data)})
    a = {"bufferView": len(views) - 1, "componentType": ctype, "count": count, "type": atype}
    if minv is not None:
        a["min"], a["max"] = minv, maxv
    accessors.append(a)
    return len(accessors) - 1


F32, U8 = 5126, 5121
pos = accessor(struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0), F32, 3, "VEC3", [0, 0, 0], [1, 1, 0])
jnt = accessor(struct.pack("<12B", 0, 1, 17, 0, 0, 1, 17, 0, 0, 1, 17, 0), U8, 3, "VEC4")
wgt = accessor(struct.pack("<12f", 0.5, 0.3, 0.2, 0, 0.5, 0.3, 0.2, 0, 0.5, 0.3, 0.2, 0), F32, 3, "VEC4")

# Joint j: node j + 1. Root at the origin; chain c goes along its own direction.
nodes = [{"name": "mesh", "mesh": 0, "skin": 0}]
world = []
nodes.append({"name": "root", "children": []})
world.append((0.0, 0.0, 0.0))
dirs = [(0, 1, 0), (1, 0, 0), (-1, 0, 0), (0, -1, 0)]
for c in range(CHAINS):
    parent = 1
    for k in range(LINKS):
        j = len(nodes)
        d = dirs[c]
        nodes.append({"name": "c%d_%02d" % (c, k), "translation": [0.1 * d[0], 0.1 * d[1], 0.1 * d[2]]})
        nodes[parent].setdefault("children", []).append(j)
        px, py, pz = world[parent - 1]
        world.append((px + 0.1 * d[0], py + 0.1 * d[1], pz + 0.1 * d[2]))
        parent = j
ibm = b"".join(struct.pack("<16f", 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -x, -y, -z, 1) for x, y, z in world)
ibm_acc = accessor(ibm, F32, joints, "MAT4")

times = [k / FPS for k in range(KEYS)]
t_acc = accessor(struct.pack("<%df" % KEYS, *times), F32, KEYS, "SCALAR", [0.0], [times[-1]])


def joint_quat(j, t):
    ax = (math.sin(j), math.cos(j * 0.7), 0.5)
    n = math.sqrt(sum(a * a for a in ax))
    ang = 0.4 * math.sin(2 * math.pi * t / 2 + j * 0.3)
    s = math.sin(ang / 2)
    return [ax[0] / n * s, ax[1] / n * s, ax[2] / n * s, math.cos(ang / 2)]


def root_translation(t):
    return [0.2 * math.sin(2 * math.pi * t / 2), 0.05 * math.cos(2 * math.pi * t), 0.0]


def clip(interp):
    """Every joint's rotation and the root's translation as `interp`
    channels; CUBICSPLINE keys are (in-tangent, value, out-tangent) with
    both tangents the motion's derivative (per second)."""
    samplers, channels = [], []

    def channel(f, node, path, atype):
        out = []
        for t in times:
            v = f(t)
            if interp == "CUBICSPLINE":
                h = 1e-4
                d = [(a - b) / (2 * h) for a, b in zip(f(t + h), f(t - h))]
                out += d + v + d
            else:
                out += v
        acc = accessor(struct.pack("<%df" % len(out), *out), F32, len(out) // len(v), atype)
        samplers.append({"input": t_acc, "output": acc, "interpolation": interp})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": path}})

    for j in range(joints):
        channel(lambda t, j=j: joint_quat(j, t), j + 1, "rotation", "VEC4")
    channel(root_translation, 1, "translation", "VEC3")
    return {"samplers": samplers, "channels": channels}


animations = [dict(name="Wave", **clip("LINEAR")), dict(name="WaveCubic", **clip("CUBICSPLINE")),
              dict(name="WaveStep", **clip("STEP"))]

gltf = {
    "asset": {"version": "2.0", "generator": "tests/data/gltf/make_rig65.py"},
    "scene": 0,
    "scenes": [{"nodes": [0, 1]}],
    "nodes": nodes,
    "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": jnt, "WEIGHTS_0": wgt}}]}],
    "skins": [{"joints": list(range(1, joints + 1)), "inverseBindMatrices": ibm_acc, "skeleton": 1}],
    "animations": animations,
    "accessors": accessors,
    "bufferViews": views,
    "buffers": [{"byteLength": len(buf),
                 "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(buf)).decode()}],
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rig65.gltf")
with open(path, "w") as f:
    json.dump(gltf, f, separators=(",", ":"))
    f.write("\n")
print(path, joints, "joints")
