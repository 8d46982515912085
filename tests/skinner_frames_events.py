#!/usr/bin/env python3
"""skinner frames --events: the events file holds one JSON line a frame,
{"frame": k, "events": [...]}, the same events the daemon's pose path
(`skinner eval`, a pose object with "events": true) answers for the same
range; --frames chunks give the lines of the whole bake; refused cases exit
2 and leave neither file behind."""
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
CHECKS = Checks("skinner_frames_events")
check = CHECKS.check
tmp = tempfile.mkdtemp()


def marked_fox(path):
    """Fox.glb with markers on its Walk clip (docs/animation.md section 8)."""
    d = open(FOX, "rb").read()
    n = struct.unpack("<I", d[12:16])[0]
    j = json.loads(d[20:20 + n])
    for a in j["animations"]:
        if a.get("name") == "Walk":
            a["extras"] = {"markers": [{"name": "step", "time": 0.1}, {"name": "land", "frame": 30}]}
    s = json.dumps(j).encode()
    s += b" " * (-len(s) % 4)
    body = struct.pack("<II", len(s), 0x4E4F534A) + s + d[20 + n:]
    open(path, "wb").write(struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body)


def run(args):
    return subprocess.run([SKINNER] + args, capture_output=True)


def lines(path):
    return [json.loads(x) for x in open(path).read().splitlines()]


def evaluate(glb, pose):
    case = os.path.join(tmp, "case.json")
    json.dump({"skeleton": {"gltf": os.path.abspath(glb)}, "ops": [dict(pose, op="pose", events=True)]},
              open(case, "w"))
    r = run(["eval", case])
    assert r.returncode == 0, r.stderr.decode()
    return [res.get("events") for res in json.loads(r.stdout)["results"]]


glb = os.path.join(tmp, "fox.glb")
marked_fox(glb)
ev, out = os.path.join(tmp, "ev.jsonl"), os.path.join(tmp, "f.bin")
for loop in (False, True):
    lp = ["--loop"] if loop else []
    r = run(["frames", glb, "--clip", "Walk", "--fps", "30", "--to", "2", "-o", out, "--events", ev] + lp)
    check("exits 0 (loop %s)" % loop, r.returncode == 0)
    got = lines(ev)
    check("a line a frame (loop %s)" % loop, [x["frame"] for x in got] == list(range(61)))
    want = evaluate(glb, {"animation": "Walk", "from": 0, "to": 2, "fps": 30, "loop": loop})
    check("the daemon's events (loop %s)" % loop, [x["events"] for x in got] == want)
    fired = [e["name"] for x in got for e in x["events"]]
    check("events fire (loop %s)" % loop, fired[:2] == ["step", "land"] and (len(fired) > 2) == loop)
    whole = open(ev).read()
    parts = ""
    for s, e in ((0, 7), (7, 30), (30, 61)):
        r = run(["frames", glb, "--clip", "Walk", "--fps", "30", "--frames", "%d:%d" % (s, e), "-o", out,
                 "--events", ev] + lp)
        check("chunk %d:%d exits 0" % (s, e), r.returncode == 0)
        parts += open(ev).read()
        want = evaluate(glb, {"animation": "Walk", "frames": [s, e], "fps": 30, "loop": loop})
        check("chunk %d:%d the daemon's events" % (s, e), [x["events"] for x in lines(ev)] == want)
    check("chunks give the whole bake's lines (loop %s)" % loop, parts == whole)

# Refused: two layers, an offset; nothing written.
for bad in (["--clip", "Walk", "--clip", "Run"], ["--clip", "Walk@0.5"], ["--clip", "Walk", "--characters", "2"]):
    nev, nout = os.path.join(tmp, "no.jsonl"), os.path.join(tmp, "no.bin")
    r = run(["frames", glb, "--to", "1", "-o", nout, "--events", nev] + bad)
    check("refused %s exits 2, one line" % bad, r.returncode == 2 and r.stderr.count(b"\n") == 1)
    check("refused %s leaves no file" % bad, not os.path.exists(nev) and not os.path.exists(nout))
sys.exit(CHECKS.summary())
