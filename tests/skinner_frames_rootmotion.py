#!/usr/bin/env python3
"""skinner frames --root-motion: the frames are the clip played in place and
the root-motion file one JSON line a frame, {"frame": k, "rootMotion":
{offset, turn, deltaOffset, deltaTurn}}, what the daemon's pose path
(`skinner eval`, a pose object with "rootMotion") answers for the same
"frames" range: the same bytes and numbers, Babylon's RootMotionController
numbers and in-place matrices (tests/data/rootframes/, as tests/rootframes.py
holds the daemon to them); --frames chunks join into the whole bake byte for
byte; refused cases exit 2 and leave neither file behind."""
import glob
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import Checks  # noqa: E402
from skinnerd_ops import Daemon  # noqa: E402

SKINNER = os.environ.get("SKINNER", "./skinner")
DATA = os.path.join(os.environ.get("SK_TEST_DATA", "tests"), "data")
CHECKS = Checks("skinner_frames_rootmotion")
check = CHECKS.check
tmp = tempfile.mkdtemp()


def run(args):
    return subprocess.run([SKINNER] + args, capture_output=True)


def motion(m):
    return tuple(m["offset"] + [m["turn"]] + m["deltaOffset"] + [m["deltaTurn"]])


def sha(mats):
    f = struct.unpack("<%df" % (len(mats) // 4), mats)
    return hashlib.sha256(struct.pack("<%df" % len(f), *[0.0 if x == 0 else x for x in f])).hexdigest()


def bake(glb, case, frames, fmt="f32", extra=()):
    out, rm = os.path.join(tmp, "f.bin"), os.path.join(tmp, "rm.jsonl")
    args = ["frames", glb, "--clip", case["clip"], "--fps", str(case["fps"]), "--frames", "%d:%d" % frames,
            "--format", fmt, "-o", out, "--root-motion", rm, "--root-motion-options", json.dumps(case["options"])]
    r = run(args + (["--loop"] if case.get("loop") else []) + list(extra))
    assert r.returncode == 0, r.stderr.decode()
    return open(out, "rb").read(), open(rm).read()


def evaluate(sid, case, frames, fmt):
    """The daemon's answer to the same pose object: (binary, JSON results)."""
    pose = {"animation": case["clip"], "frames": list(frames), "fps": case["fps"],
            "loop": bool(case.get("loop")), "rootMotion": case["options"]}
    accept = "application/x-skinner-mat3x4" if fmt == "f32x12" else "application/octet-stream"
    st, binary = DAEMON.req("POST", "/v1/skeletons/%s/pose" % sid, pose, accept=accept)
    st2, text = DAEMON.req("POST", "/v1/skeletons/%s/pose" % sid, pose)
    assert st == st2 == 200, (binary[:300], text[:300])
    return binary, json.loads(text)["results"]


DAEMON = Daemon()
cases = 0
for path in sorted(glob.glob(os.path.join(DATA, "rootframes", "*.json"))):
    exp = json.load(open(path))
    glb = os.path.join(DATA, exp["asset"])
    if not os.path.exists(glb):
        glb = os.path.join(DATA, "gen", exp["asset"])
    sid = "s%d" % cases
    st, _ = DAEMON.req("PUT", "/v1/skeletons/" + sid, open(glb, "rb").read(), "model/gltf-binary")
    check("%s uploads" % exp["asset"], st == 201)
    for case in exp["cases"]:
        n = case["frames"]
        name = "%s %s %s" % (exp["asset"], case["clip"], json.dumps(case["options"]))
        mats, text = bake(glb, case, (0, n))
        lines = [json.loads(x) for x in text.splitlines()]
        check("%s: a line a frame" % name, [x["frame"] for x in lines] == list(range(n)))
        per = len(mats) // n
        got = [mats[k * per:(k + 1) * per] for k in range(n)]
        bad_m = [k for k in range(n) if sha(got[k]) != case["results"][k]["finalSha256"]]
        check("%s: the in-place matrices are Babylon's (bad: %s)" % (name, bad_m[:5]), not bad_m and per * n == len(mats))
        want = [tuple(r["offset"] + [r["turn"]] + r["deltaOffset"] + [r["deltaTurn"]]) for r in case["results"]]
        check("%s: the motion is the controller's" % name, [motion(x["rootMotion"]) for x in lines] == want)
        for fmt, fpm in (("f32", 16), ("f32x12", 12)):
            m2, t2 = bake(glb, case, (0, n), fmt) if fmt != "f32" else (mats, text)
            binary, results = evaluate(sid, case, (0, n), fmt)
            stride = len(binary) // n
            daemon = b"".join(binary[k * stride:(k + 1) * stride - 64] for k in range(n))
            doubles = [struct.unpack("<8d", binary[(k + 1) * stride - 64:(k + 1) * stride]) for k in range(n)]
            check("%s %s: the daemon's bytes" % (name, fmt), m2 == daemon)
            mt = [motion(json.loads(x)["rootMotion"]) for x in t2.splitlines()]
            check("%s %s: the daemon's motion (JSON and binary)" % (name, fmt),
                  mt == [motion(r["rootMotion"]) for r in results] == doubles)
        # chunks, a resume, and one frame join into the whole bake
        cut = sorted({0, 1, min(7, n), n // 2, n - 1, n})
        parts_m, parts_t = b"", ""
        for a, b in zip(cut, cut[1:]):
            m, t = bake(glb, case, (a, b))
            parts_m, parts_t = parts_m + m, parts_t + t
        check("%s: chunks %s are the whole bake's bytes and lines" % (name, cut), parts_m == mats and parts_t == text)
        cases += 1
check("every committed root-motion case baked", cases >= 10)

# The header counts the frames; the matrices follow it.
case = {"clip": "Run", "fps": 24, "loop": True, "options": {"source": "root", "minimumTravel": 0.05}}
fox = os.path.join(DATA, "Fox.glb")
plain, _ = bake(fox, case, (3, 40))
hdr, _ = bake(fox, case, (3, 40), extra=["--header"])
check("--header: 32 bytes, 37 frames, then the same matrices",
      hdr[:8] == b"SKFRAME1" and struct.unpack("<I", hdr[20:24])[0] == 37 and hdr[32:] == plain)
# 1000 looping frames in chunks of 377, 622 and 1 (several pose requests each)
big, bigt = bake(fox, case, (0, 1000))
pm, pt = b"", ""
for a, b in ((0, 377), (377, 999), (999, 1000)):
    m, t = bake(fox, case, (a, b))
    pm, pt = pm + m, pt + t
check("1000 frames in chunks of 377, 622, 1: the whole bake", pm == big and pt == bigt and len(bigt.splitlines()) == 1000)

# Refused: no --frames, two layers, an offset, two characters, vertices, bad options; nothing written.
for bad, what in ((["--clip", "Walk", "--to", "1"], "--frames"),
                  (["--clip", "Walk", "--clip", "Run", "--frames", "0:5"], "one --clip"),
                  (["--clip", "Walk@0.5", "--frames", "0:5"], "@OFFSET"),
                  (["--clip", "Walk", "--characters", "2", "--frames", "0:5"], "one character"),
                  (["--clip", "Walk", "--output", "vertices", "--frames", "0:5"], "matrices"),
                  (["--clip", "Walk", "--frames", "0:5", "--root-motion-options", "{\"source\":\"feet\"}"], "/rootMotion/source"),
                  (["--clip", "Walk", "--frames", "0:5", "--root-motion-options", "{\"samplesPerSecond\":5000}"],
                   "/rootMotion/samplesPerSecond"),
                  (["--clip", "Walk", "--frames", "0:5", "--root-motion-options", "[1]"], "a JSON object"),
                  (["--clip", "Walk", "--frames", "0:5", "--root-motion-options", "{"], "--root-motion-options")):
    nrm, nout = os.path.join(tmp, "no.jsonl"), os.path.join(tmp, "no.bin")
    r = run(["frames", fox, "-o", nout, "--root-motion", nrm] + bad)
    err = r.stderr.decode()
    check("refused %s exits 2, one line naming %s (%s)" % (bad, what, err.strip()),
          r.returncode == 2 and err.count("\n") == 1 and what in err)
    check("refused %s leaves no file" % bad, not os.path.exists(nrm) and not os.path.exists(nout))
r = run(["frames", fox, "--frames", "0:5", "--root-motion-options", "{}"])
check("--root-motion-options alone is refused", r.returncode == 2 and b"--root-motion" in r.stderr)
DAEMON.stop()
sys.exit(CHECKS.summary())
