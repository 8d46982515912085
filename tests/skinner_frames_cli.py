#!/usr/bin/env python3
"""skinner frames, read back: the binary file (proto/frames.md) holds, frame
by frame and character by character, exactly the final matrices `skinner
eval` prints for the same frame range (the exact engine, bit for bit), the
3x4 form is their transposed top rows, the kernel engine is within 1e-5 of
the matrix scale, and bad input exits 2 with one line."""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import Checks  # noqa: E402

SKINNER = os.environ.get("SKINNER", "./skinner")
DATA = os.environ.get("SK_TEST_DATA", "tests")
FOX = os.path.join(DATA, "data", "Fox.glb")
# The exact kernel (SK_KERNEL_TRS64) is in and sk_clips.h's
# SK_CLIPS_TRS64 is 1: the kernel engine must then give the exact engine's
# bytes (SK_CLIPS_EXACT_KERNEL=0 holds it to 1e-5 instead).
EXACT_KERNEL = os.environ.get("SK_CLIPS_EXACT_KERNEL", "1") == "1"
CHECKS = Checks("skinner_frames_cli")
check = CHECKS.check


def run(args, **kw):
    return subprocess.run([SKINNER] + args, capture_output=True, **kw)


def evaluate(case):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(case, f)
    try:
        r = run(["eval", f.name])
        assert r.returncode == 0, r.stderr.decode()
        return json.loads(r.stdout)
    finally:
        os.unlink(f.name)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def read_frames(path, header=True):
    data = open(path, "rb").read()
    if not header:
        return data
    magic, fpm, mats, chars, frames, fps, zero = struct.unpack("<8sIIIIfI", data[:32])
    return magic, fpm, mats, chars, frames, fps, zero, data[32:]


tmp = tempfile.mkdtemp()
out = os.path.join(tmp, "fox.bin")

# One character, exact engine, header: equal to skinner eval's finals.
r = run(["frames", FOX, "--clip", "Walk", "--from", "0", "--to", "0.5", "--fps", "30", "--header", "-o", out])
check("frames exits 0", r.returncode == 0 and r.stdout == b"")
magic, fpm, mats, chars, frames, fps, zero, body = read_frames(out)
check("header magic", magic == b"SKFRAME1")
check("header counts", (fpm, mats, chars, frames, fps, zero) == (16, 25, 1, 16, 30.0, 0))
check("body size", len(body) == frames * chars * mats * fpm * 4)
ev = evaluate({"skeleton": {"gltf": os.path.abspath(FOX)},
               "ops": [{"op": "pose", "animation": "Walk", "from": 0, "to": 0.5, "fps": 30}]})
got = struct.unpack("<%df" % (len(body) // 4), body)
want = [f32(x) for res in ev["results"] for x in res["final"]]
check("exact engine equals skinner eval bit for bit", len(ev["results"]) == 16 and
      [struct.pack("<f", x) for x in got] == [struct.pack("<f", x) for x in want])
check("trailing identity", list(got[24 * 16:25 * 16]) == [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1])

# The same on stdout, no header; the 3x4 form is the transposed top rows.
r = run(["frames", FOX, "--clip", "Walk", "--from", "0", "--to", "0.5", "--fps", "30"])
check("stdout without header is the body", r.returncode == 0 and r.stdout == body)
body_exact = body
r = run(["frames", FOX, "--clip", "Walk", "--from", "0", "--to", "0.5", "--fps", "30", "--format", "f32x12"])
g12 = struct.unpack("<%df" % (len(r.stdout) // 4), r.stdout)
ok = len(g12) == 16 * 25 * 12
for m in range(16 * 25):
    a, b = got[16 * m:16 * m + 16], g12[12 * m:12 * m + 12]
    ok = ok and all(b[4 * c + rr] == a[4 * rr + c] for c in range(3) for rr in range(4))
check("f32x12 is mat3x4 of the f32 matrices", ok)

# The kernel engine: within the kernel's tolerance of the exact bits.
r = run(["frames", FOX, "--clip", "Walk", "--from", "0", "--to", "0.5", "--fps", "30", "--engine", "kernel"])
gk = struct.unpack("<%df" % (len(r.stdout) // 4), r.stdout)
worst = 0.0
for m in range(16 * 25):
    a, b = gk[16 * m:16 * m + 16], got[16 * m:16 * m + 16]
    scale = max(1.0, max(abs(x) for x in b))
    worst = max(worst, max(abs(x - y) for x, y in zip(a, b)) / scale)
check("kernel engine within 1e-5 of exact (worst %.3g)" % worst, r.returncode == 0 and len(gk) == len(got) and
      worst <= 1e-5)
if EXACT_KERNEL:
    check("kernel engine byte-identical to exact", r.stdout == body_exact)

# A shot: 3 characters x frames of a blend, staggered; each character's
# frames equal skinner eval's blended frame range with shifted offsets.
r = run(["frames", FOX, "--clip", "Walk@0.1*0.7", "--clip", "Run*0.3", "--loop", "--from", "0.2", "--to", "0.9",
         "--fps", "24", "--characters", "3", "--stagger", "0.25", "--header", "-o", out])
check("blended shot exits 0", r.returncode == 0)
magic, fpm, mats, chars, frames, fps, zero, body = read_frames(out)
check("shot header", (chars, frames, mats) == (3, 17, 25))
shot = struct.unpack("<%df" % (len(body) // 4), body)
row = mats * 16
ok = len(shot) == frames * chars * row
for c in range(3):
    shift = c * 0.25

    def off(t):
        return t if shift == 0 else shift + t
    ev = evaluate({"skeleton": {"gltf": os.path.abspath(FOX)},
                   "ops": [{"op": "pose", "from": 0.2, "to": 0.9, "fps": 24,
                            "layers": [{"animation": "Walk", "time": off(0.1), "weight": 0.7, "loop": True},
                                       {"animation": "Run", "time": off(0.0), "weight": 0.3, "loop": True}]}]})
    ok = ok and len(ev["results"]) == frames
    for f in range(frames):
        want = [struct.pack("<f", f32(x)) for x in ev["results"][f]["final"]]
        have = [struct.pack("<f", x) for x in shot[(f * chars + c) * row:(f * chars + c + 1) * row]]
        ok = ok and want == have
check("each character of the shot equals skinner eval's blended range", ok)

# Bad input: exit 2, one line.
for args, what in ((["--clip", "Nope"], "unknown clip"), (["--format", "f64"], "unknown format"),
                   (["--fps", "0"], "fps 0"), (["--from", "2", "--to", "1"], "to before from"),
                   (["--characters", "0"], "no characters"), (["--clip", "Walk*-1"], "negative weight"),
                   (["--clip", "Walk*inf"], "infinite weight"), (["--clip", "Walk@nan"], "offset not a number")):
    r = run(["frames", FOX] + args)
    check("%s exits 2 with one line" % what, r.returncode == 2 and r.stderr.count(b"\n") == 1 and r.stdout == b"")
r = run(["frames", "/nonexistent.glb"])
check("a missing file exits 2", r.returncode == 2)
r = run(["frames", "--help"])
check("--help exits 0", r.returncode == 0 and r.stdout.startswith(b"usage: skinner frames"))

sys.exit(CHECKS.summary())
