#!/usr/bin/env python3
"""skinner frames, read back: the binary file (proto/frames.md) holds, frame
by frame and character by character, exactly the final matrices `skinner
eval` prints for the same frame range, bit for bit, with either engine (the
kernel, the default, and the scalar core), the 3x4 form is their transposed
top rows, and bad input exits 2 with one line. `skinner eval
--format f32|f32x12` writes the same bytes as skinner frames for the same
range, to -o FILE as to stdout, in bounded memory (JSON too), and leaves no
file behind when the case is refused."""
import base64
import json
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

# One character, the default engine (the kernel), header: equal to skinner
# eval's finals.
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
check("default engine equals skinner eval bit for bit", len(ev["results"]) == 16 and
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

# Both engines by name: the same bytes as the default's (Babylon's bits).
for engine in ("kernel", "exact"):
    r = run(["frames", FOX, "--clip", "Walk", "--from", "0", "--to", "0.5", "--fps", "30", "--engine", engine])
    check("--engine %s byte-identical to the default" % engine, r.returncode == 0 and r.stdout == body_exact)
r = run(["frames", FOX, "--clip", "Walk", "--loop", "--from", "0", "--to", "30", "--fps", "60", "--characters", "3",
         "--stagger", "0.4"])
r2 = run(["frames", FOX, "--clip", "Walk", "--loop", "--from", "0", "--to", "30", "--fps", "60", "--characters", "3",
          "--stagger", "0.4", "--engine", "exact"])
check("a 1801-frame shot: the kernel's bytes are the scalar core's", r.returncode == 0 and
      len(r.stdout) == 1801 * 3 * 25 * 64 and r.stdout == r2.stdout)

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

# --frames START:END (frame k at k / fps): a 10 000-frame shot in chunks of 1,
# 64, 777 and 1000 frames, or resumed halfway, is the whole shot's bytes,
# which are the single poses' at "time": k / fps (skinner eval).
N = 10000
SHOT = ["frames", FOX, "--clip", "Survey", "--loop", "--fps", "30"]
POSE = 25 * 64


def frames_of(a, b, extra=()):
    r = run(SHOT + ["--frames", "%d:%d" % (a, b)] + list(extra))
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


whole = frames_of(0, N)
check("--frames 0:10000 holds 10 000 frames", len(whole) == N * POSE)
r = run(SHOT + ["--from", "0", "--to", repr((N - 1) / 30)])
check("--frames from 0 is the --from 0 shot", r.returncode == 0 and r.stdout == whole)
for c in (64, 777, 1000):
    got = b"".join(frames_of(k, min(k + c, N)) for k in range(0, N, c))
    check("--frames in chunks of %d is the whole shot" % c, got == whole)
got = b"".join(frames_of(k, k + 1) for k in range(4990, 5010))
check("--frames in chunks of 1 (frames 4990..5009) is the whole shot", got == whole[4990 * POSE:5010 * POSE])
check("--frames resumed halfway is the whole shot", frames_of(0, N // 2) + frames_of(N // 2, N) == whole)
r = run(SHOT + ["--frames", "%d:%d" % (N // 2, N), "--header"])
magic, fpm, mats, chars, frames, fps, zero = struct.unpack("<8sIIIIfI", r.stdout[:32])
check("a resumed shot's header counts its frames", r.returncode == 0 and frames == N // 2 and
      r.stdout[32:] == whole[N // 2 * POSE:])
case = {"skeleton": {"gltf": os.path.abspath(FOX)},
        "ops": [{"op": "pose", "animation": "Survey", "loop": True, "time": k / 30} for k in range(N)]}
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(case, f)
r = run(["eval", "--format", "f32", f.name])
os.unlink(f.name)
check("--frames equals skinner eval's single poses at k / fps", r.returncode == 0 and r.stdout == whole)
two = ["--characters", "2", "--stagger", "0.25"]
w2 = frames_of(0, 2000, two)
check("two staggered characters: --frames in chunks of 777 is the whole shot",
      b"".join(frames_of(k, min(k + 777, 2000), two) for k in range(0, 2000, 777)) == w2)

# Bad input: exit 2, one line.
for args, what in ((["--clip", "Nope"], "unknown clip"), (["--format", "f64"], "unknown format"),
                   (["--fps", "0"], "fps 0"), (["--from", "2", "--to", "1"], "to before from"),
                   (["--characters", "0"], "no characters"), (["--clip", "Walk*-1"], "negative weight"),
                   (["--clip", "Walk*inf"], "infinite weight"), (["--clip", "Walk@nan"], "offset not a number"),
                   (["--frames", "5:4"], "--frames reversed"), (["--frames", "5:5"], "--frames empty"),
                   (["--frames", "1.5:4"], "--frames not integers"), (["--frames", "-1:4"], "--frames negative"),
                   (["--frames", "4"], "--frames without END"), (["--frames", "0:4", "--from", "0"],
                                                                  "--frames with --from")):
    r = run(["frames", FOX] + args)
    check("%s exits 2 with one line" % what, r.returncode == 2 and r.stderr.count(b"\n") == 1 and r.stdout == b"")
# A bad --frames names the option, whatever is wrong with it.
for v, what in (("7:7", "empty"), ("0:0", "empty at 0"), ("9:3", "reversed"), ("0:4.5", "END not an integer"),
                ("a:4", "START not a number"), ("-1:4", "negative"), ("0:9007199254740993", "END over 2^53"),
                ("9007199254740993:9007199254740994", "START over 2^53"), ("0:", "END missing")):
    r = run(["frames", FOX, "--frames", v])
    check("--frames %s (%s) exits 2 with one line naming --frames" % (v, what),
          r.returncode == 2 and r.stderr.count(b"\n") == 1 and b"--frames" in r.stderr and r.stdout == b"")
r = run(["frames", "/nonexistent.glb"])
check("a missing file exits 2", r.returncode == 2)
r = run(["frames", "--help"])
check("--help exits 0", r.returncode == 0 and r.stdout.startswith(b"usage: skinner frames"))

# skinner eval --format: the frames of a case's ranges, the bytes skinner frames writes.
case = os.path.join(tmp, "case.json")
with open(case, "w") as f:
    json.dump({"skeleton": {"gltf": os.path.abspath(FOX)},
               "ops": [{"op": "pose", "animation": "Walk", "from": 0, "to": 0.5, "fps": 30}]}, f)
for fmt, fpm in (("f32", 16), ("f32x12", 12)):
    fr = run(["frames", FOX, "--clip", "Walk", "--from", "0", "--to", "0.5", "--fps", "30", "--format", fmt])
    ev = run(["eval", "--format", fmt, case])
    check("eval --format %s equals skinner frames" % fmt, ev.returncode == 0 and fr.returncode == 0 and
          ev.stdout == fr.stdout and len(ev.stdout) == 16 * 25 * fpm * 4)
    r = run(["eval", "--format", fmt, "-o", out, case])
    check("eval --format %s -o FILE writes what stdout gets" % fmt,
          r.returncode == 0 and r.stdout == b"" and open(out, "rb").read() == ev.stdout)
r = run(["eval", "-o", out, case])
check("eval -o FILE writes the JSON answer", r.returncode == 0 and json.loads(open(out).read())["order"][0] ==
      "_rootJoint")
bad = os.path.join(tmp, "bad.json")
with open(bad, "w") as f:
    json.dump({"skeleton": {"gltf": os.path.abspath(FOX)},
               "ops": [{"op": "pose", "animation": "Walk", "from": 0, "to": 0.5, "fps": 30},
                       {"op": "pose", "output": ["final", "absolute"]}]}, f)
os.unlink(out)
r = run(["eval", "--format", "f32", "-o", out, bad])
check("a refused case exits 2 with one line naming the field, and leaves no file",
      r.returncode == 2 and r.stderr.count(b"\n") == 1 and b"/ops/1/output/1" in r.stderr and not os.path.exists(out))
with open(out, "wb") as f:
    f.write(b"the last good shot")
r = run(["eval", "--format", "f32", "-o", out, bad])
check("a refused case keeps -o FILE's previous content, and no temporary file stays",
      r.returncode == 2 and open(out, "rb").read() == b"the last good shot" and
      sorted(os.listdir(tmp)) == sorted(x for x in os.listdir(tmp) if ".tmp-" not in x))
os.unlink(out)
null_before = os.stat("/dev/null")
r = run(["eval", "--format", "f32", "-o", "/dev/null", bad])
null_after = os.stat("/dev/null") if os.path.exists("/dev/null") else None
check("a refused case leaves -o /dev/null in place (only regular files are removed)",
      r.returncode == 2 and null_after is not None and null_after.st_rdev == null_before.st_rdev)
if os.path.exists("/dev/full"):
    for fmt in ("json", "f32"):
        r = run(["eval", "--format", fmt, "-o", "/dev/full", case])
        check("a failed write (%s to /dev/full) exits 1 with one line" % fmt,
              r.returncode == 1 and r.stderr.count(b"\n") == 1 and b"writing the output failed" in r.stderr and
              os.path.exists("/dev/full"))
r = run(["eval", "--format", "f64", case])
check("an unknown eval format exits 2", r.returncode == 2 and r.stderr.count(b"\n") == 1 and r.stdout == b"")
# A clip whose matrices overflow float32 (finite scales of 1e30 under each
# other) is refused, in JSON (it printed null before) and in binary.
times, rots = struct.pack("<2f", 0, 1), struct.pack("<8f", 0, 0, 0, 1, 0, 0.7071068, 0, 0.7071068)
ovf = {"asset": {"version": "2.0"},
       "nodes": [{"name": "root", "children": [1], "scale": [1e30] * 3},
                 {"name": "tip", "translation": [0, 1, 0], "scale": [1e30] * 3}],
       "skins": [{"joints": [0, 1]}],
       "buffers": [{"byteLength": 40, "uri": "data:application/octet-stream;base64," +
                    base64.b64encode(times + rots).decode()}],
       "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 8},
                       {"buffer": 0, "byteOffset": 8, "byteLength": 32}],
       "accessors": [{"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [1]},
                     {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC4"}],
       "animations": [{"name": "Turn", "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
                       "samplers": [{"input": 0, "output": 1}]}]}
with open(os.path.join(tmp, "ovf.gltf"), "w") as f:
    json.dump(ovf, f)
with open(case, "w") as f:
    json.dump({"skeleton": {"gltf": "ovf.gltf"}, "ops": [{"op": "pose", "animation": "Turn", "from": 0, "to": 1,
                                                         "fps": 4}]}, f)
for fmt in ("json", "f32"):
    r = run(["eval", "--format", fmt, case])
    check("an overflowing %s range exits 2 naming the op" % fmt, r.returncode == 2 and r.stdout == b"" and
          b'"/ops/0": a matrix of the result is not finite' in r.stderr)

# A long shot goes out in pieces: 60 001 frames (96 MB) in a small peak.
with open(case, "w") as f:
    json.dump({"skeleton": {"gltf": os.path.abspath(FOX)},
               "ops": [{"op": "pose", "animation": "Walk", "loop": True, "from": 0, "to": 1000, "fps": 60}]}, f)
probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
         "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
r = subprocess.run([sys.executable, "-c", probe, SKINNER, "eval", "--format", "f32", "-o", out, case],
                   capture_output=True, text=True)
status, peak_kb = (int(x) for x in r.stdout.split())
size = os.path.getsize(out) if os.path.exists(out) else -1
check("a 96 MB shot is written whole with a peak of %d KB (< 48 MB): %s" % (peak_kb, r.stderr.strip()),
      status == 0 and size == 60001 * 25 * 64 and peak_kb < 48 * 1024)
r = subprocess.run([sys.executable, "-c", probe, SKINNER, "eval", "-o", out, case], capture_output=True, text=True)
status, peak_kb = (int(x) for x in r.stdout.split())
with open(out) as f:
    head = f.read(64)
    f.seek(0, os.SEEK_END)
    size = f.tell()
check("the same shot as JSON (%d MB) is written whole with a peak of %d KB (< 48 MB): %s" %
      (size >> 20, peak_kb, r.stderr.strip()), status == 0 and head.startswith('{"order":["_rootJoint"') and
      size > 150 << 20 and peak_kb < 48 * 1024)
os.unlink(out)

sys.exit(CHECKS.summary())
