#!/usr/bin/env python3
"""make bench-clips: one run of `skinner bench --clips --json` and of
tests/oracle/bench_clips.mjs (Babylon.js, Node) on the same clips and frames,
printed as one table with issue 12's targets and PASS/MISS (and, without
a target of its own, Fox's Walk in Babylon's skeleton format,
tests/data/fox-walk-babylon.json, against Babylon.js playing that file):
  pipeline >= 100 M bone matrices per CPU-second, >= 40x Babylon.js,
  `skinner frames` to a file in page cache >= 90 % of its in-memory rate
  (and, restated, >= 0.9 of the slower of that rate and the bare write of
  the same bytes to the same file: the `write` row);
and the ceiling of exact sampling on this machine (V8's sin in SIMD lanes per LINEAR
rotation, the exact kernel alone) with the kernel row's share of it
(docs/clips.md, "Targets restated": >= 0.8).

and the daemon's end-to-end rate on a frame range: skinnerd (next to
SKINNER, or each --skinnerd PATH given, e.g. an older build to compare in
the same run) answers POST /v1/skeletons/fox/pose with Fox's Walk, 1024
frames at 60 fps, looping, binary (application/octet-stream, 25 x 64 bytes
a frame), over loopback; bone matrices per CPU-second of the daemon
(/proc/PID/stat) and per second of wall time (median request).

and the same client loop against tests/bench/sendbase (next to SKINNER, or
--sendbase PATH), which answers the same bytes over the same loopback and
computes nothing: the `send` row, the bare transfer's rate in bone matrices
per server CPU-second. Each daemon is then set against the bound
1 / (1 / route + 1 / send) (the in-process route row plus the bare send),
restated target 3: >= 0.8 of it (docs/clips.md, "The HTTP row against the
bare transfer").

  bench_clips.py SKINNER TOP_SRCDIR [--quick] [--skinnerd PATH]... [--sendbase PATH]"""
import http.client
import json
import os
import subprocess
import sys
import time

DAEMON_FRAMES = 1024
DAEMON_BYTES = DAEMON_FRAMES * 25 * 64  # 24 bones and the trailing identity a frame


def daemon_cpu(pid):
    """utime + stime of `pid` in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def daemon_range(argv, data, quick, put_fox=True):
    """(bone matrices per server CPU-second, per wall second) of a binary
    frame range of Fox's Walk over HTTP from the server `argv` starts (it
    prints "listening on ADDR:PORT" first; with put_fox, Fox is PUT first),
    or None when it did not run."""
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError as e:
        print("bench-clips: %s did not start: %s" % (argv[0], e), file=sys.stderr)
        return None
    try:
        first = p.stdout.readline().split()
        if not first:
            print("bench-clips: %s did not say where it listens" % argv[0], file=sys.stderr)
            return None
        host, port = first[-1].rsplit(":", 1)
        c = http.client.HTTPConnection(host, int(port), timeout=60)
        if put_fox:
            with open(os.path.join(data, "Fox.glb"), "rb") as f:
                glb = f.read()
            c.request("PUT", "/v1/skeletons/fox", glb, {"Host": "localhost", "Content-Type": "model/gltf-binary"})
            r = c.getresponse()
            r.read()
            if r.status not in (200, 201):
                return None
        body = json.dumps({"animation": "Walk", "from": 0, "to": (DAEMON_FRAMES - 1) / 60, "fps": 60, "loop": True})
        hdr = {"Host": "localhost", "Content-Type": "application/json", "Accept": "application/octet-stream"}
        walls, cpu, n = [], 0.0, 0
        budget = 0.5 if quick else 2.0
        while cpu < budget or n < 5:
            c0, t0 = daemon_cpu(p.pid), time.perf_counter()
            c.request("POST", "/v1/skeletons/fox/pose", body, hdr)
            r = c.getresponse()
            d = r.read()
            walls.append(time.perf_counter() - t0)
            cpu += daemon_cpu(p.pid) - c0
            n += 1
            if r.status != 200 or len(d) != DAEMON_BYTES:
                print("bench-clips: %s answered %d (%d bytes)" % (argv[0], r.status, len(d)), file=sys.stderr)
                return None
        walls.sort()
        mats = DAEMON_FRAMES * 24
        return mats * n / cpu, mats / walls[len(walls) // 2]
    finally:
        p.terminate()
        p.wait()


def install_oracle(here):
    """The pinned Babylon.js (exact versions in tests/oracle/package.json), as the
    conformance scripts install it, so a fresh clone's `make bench-clips`
    prints the ratios; a failure is reported by the Babylon rows."""
    if os.path.isfile(os.path.join(here, "node_modules", "@babylonjs", "core", "package.json")):
        return
    print("bench-clips: installing the oracle's Babylon.js (npm install in tests/oracle)", file=sys.stderr)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=here,
                   stdout=sys.stderr, check=False)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    skinner, top = sys.argv[1], sys.argv[2]
    quick = ["--quick"] if "--quick" in sys.argv[3:] else []
    daemons = [sys.argv[i + 1] for i in range(3, len(sys.argv) - 1) if sys.argv[i] == "--skinnerd"]
    if not daemons:
        daemons = [os.path.join(os.path.dirname(os.path.abspath(skinner)), "skinnerd")]
    sendbase = [sys.argv[i + 1] for i in range(3, len(sys.argv) - 1) if sys.argv[i] == "--sendbase"]
    sendbase = sendbase[-1] if sendbase else os.path.join(os.path.dirname(os.path.abspath(skinner)), "tests",
                                                          "bench", "sendbase")
    data = os.path.join(top, "tests", "data")
    rows = json.loads(subprocess.run([skinner, "bench", "--clips", "--json", "--data", data] + quick,
                                     check=True, capture_output=True, text=True).stdout)
    babylon = {}
    oracle = os.path.join(top, "tests", "oracle", "bench_clips.mjs")
    install_oracle(os.path.dirname(oracle))
    for clip in sorted({r["clip"] for r in rows}):
        fname, cname = clip.split(":", 1)
        r = subprocess.run(["node", oracle, os.path.join(data, fname), cname] + quick, capture_output=True, text=True)
        if r.returncode != 0:
            print("bench-clips: Babylon.js did not run (npm install in tests/oracle?):", r.stderr.strip()[-300:],
                  file=sys.stderr)
            babylon[clip] = None
        else:
            babylon[clip] = json.loads(r.stdout)["rate"]
    print("%-28s %-7s %5s %12s %12s %9s   %s" % ("clip", "row", "bones", "M/s /core", "Babylon M/s", "ratio",
                                                 "targets: >= 100 M/s, >= 40x Babylon; file >= 90 % of in-memory"))
    miss = 0
    ceiling = {r["clip"]: r for r in rows if r["row"] == "ceiling"}
    for r in rows:
        b = babylon.get(r["clip"])
        rate = r["rate"]
        if r["row"].startswith("ops-"):  # the Bone API's per-frame cost (no target)
            print("%-28s %-7s %5d %12.2f %12s %8.2fx   - (%.2f us a frame, x the plain range)" %
                  (r["clip"], r["row"][4:], r["bones"], rate / 1e6, "", r["ratio"], r["us_per_frame"]))
            continue
        if r["row"] == "ceiling":
            # What the 100 M/s goal asks of this machine: above 1, more than
            # the exact kernel and the sines alone allow, whatever the sampler.
            print("%-28s %-7s %5d %12.2f %12s %9s   - (1 / (%.2f sin per bone x %.2f ns + exact kernel %.2f ns); "
                  "docs/clips.md, Targets restated; 100 M/s is %.2f of it, the kernel alone %.1f M/s)" %
                  (r["clip"], "ceiling", r["bones"], rate / 1e6, "", "", r["sines_per_bone"], r["sin_ns"],
                   r["kernel_ns"], 100e6 / rate if rate > 0 else float("inf"),
                   1e3 / r["kernel_ns"] if r["kernel_ns"] > 0 else 0))
            continue
        if r["row"] == "frames-file":
            ok = r["ratio"] >= 0.9
            miss += not ok
            print("%-28s %-7s %5d %12.2f %12s %8.1f%%   %s (skinner frames to a file vs %.2f M/s in memory, wall)" %
                  (r["clip"], "file", r["bones"], rate / 1e6, "", 100 * r["ratio"], "PASS" if ok else "MISS",
                   r["mem_rate"] / 1e6))
            if "write_rate" in r:
                # restated: against the slower of computing and the bare
                # write of the same bytes (docs/clips.md, "The file row
                # against the bare write"); reported, the line above gates
                print("%-28s %-7s %5d %12.2f %12s %9.2f   %s (the file row over min(in memory, bare write); "
                      "restated target >= 0.9)" %
                      (r["clip"], "write", r["bones"], r["write_rate"] / 1e6, "", r["of_bound"],
                       "PASS" if r["of_bound"] >= 0.9 else "MISS"))
            continue
        ratio = rate / b if b else float("nan")
        if "of_one" in r:  # glTF layers, one pose: the per-call cost (no target of its own)
            r["of_layers"] = r["of_one"]
        if "of_layers" in r:  # glTF layers: plain, masked, additive (no target of their own)
            what = {"layers": "Walk and Run 0.3 s later, half each", "masked": "Survey over the upper body",
                    "additive": "Survey added at 0.5", "layers-1": "one pose of Walk and Run",
                    "additive-1": "one pose, Survey added at 0.5, reference 0 (keys made at upload)",
                    "additive-1r": "one pose, Survey added at 0.5, reference 0.01 s (keys made per call)",
                    "additive-1m": "one pose, Survey added at 0.5, reference 0.01 s (keys kept at first use)"}[r["row"]]
            of = "the one-pose plain row" if "-1" in r["row"] else "the plain two-layer row"
            print("%-28s %-7s %5d %12.2f %12s %9s   - (route, two layers: %s; %.2f of %s)" %
                  (r["clip"], r["row"], r["bones"], rate / 1e6, "", "", what, r["of_layers"], of))
            if "of_per_call" in r:  # keys made at upload against made per call, same run
                print("%-28s %-7s %5s %12s %12s %9.2f   %s (%s over additive-1r; target >= 1.5)" %
                      (r["clip"], "kept", "", "", "", r["of_per_call"], "PASS" if r["of_per_call"] >= 1.5 else "MISS",
                       r["row"]))
            continue
        if "of_plain" in r:  # Babylon's format, Hermite or STEP keys (no target of its own)
            print("%-28s %-7s %5d %12.2f %12s %9s   - (Babylon's format, every key %s: %.2f of its route row)" %
                  (r["clip"], r["row"], r["bones"], rate / 1e6, "", "",
                   "with tangents" if r["row"] == "hermite" else "STEP", r["of_plain"]))
            continue
        if "of_route" in r:  # Babylon's format, two layers (no target of its own)
            print("%-28s %-7s %5d %12.2f %12s %8.1fx   - (Babylon's format: two layers, the clip and itself 0.37 s "
                  "later, half each; %.2f of its route row)" % (r["clip"], r["row"], r["bones"], rate / 1e6,
                                                                 "%.2f" % (b / 1e6) if b else "n/a", ratio,
                                                                 r["of_route"]))
            continue
        if "of_overrides" in r:  # a clip in Babylon's format (no target of its own)
            print("%-28s %-7s %5d %12.2f %12s %8.1fx   - (Babylon's format: range form, %.2fx the override form's "
                  "%.2f M/s)" % (r["clip"], r["row"], r["bones"], rate / 1e6, "%.2f" % (b / 1e6) if b else "n/a",
                                 ratio, r["of_overrides"], r["overrides_rate"] / 1e6))
            continue
        if r["row"] == "interp":  # CUBICSPLINE / STEP copies of a LINEAR clip (no target)
            print("%-28s %-7s %5d %12.2f %12s %8.1fx   - (kernel row; %.2f of the LINEAR clip's)" %
                  (r["clip"], "interp", r["bones"], rate / 1e6, "%.2f" % (b / 1e6) if b else "n/a", ratio,
                   r["of_linear"]))
            continue
        verdict = "-"
        if r["row"] == "blend":
            verdict = "- (two layers: the clip and itself 0.37 s later, half each; no target)"
        elif r["row"] != "sample":
            ok = rate >= 100e6 and b is not None and ratio >= 40
            miss += not ok
            verdict = "%s (%s M/s, %s 40x)" % ("PASS" if ok else "MISS", ">=" if rate >= 100e6 else "<",
                                               ">=" if b and ratio >= 40 else "<")
            c = ceiling.get(r["clip"])
            if r["row"] == "kernel" and c and c["rate"] > 0:
                f = rate / c["rate"]
                verdict += "; %.2f of the ceiling, restated target >= 0.8: %s" % (f, "PASS" if f >= 0.8 else "MISS")
        print("%-28s %-7s %5d %12.2f %12s %8.1fx   %s" % (r["clip"], r["row"], r["bones"], rate / 1e6,
                                                          "%.2f" % (b / 1e6) if b else "n/a", ratio, verdict))
    fox = babylon.get(next((r["clip"] for r in rows if r["clip"].startswith("Fox.glb:")), ""), None)
    route = next((r["rate"] for r in rows if r["clip"] == "Fox.glb:Walk" and r["row"] == "route"), None)
    send = None
    if not os.access(sendbase, os.X_OK):
        print("%-28s %-7s %5d %12s   (no %s: `make tests/bench/sendbase`; bound row skipped)" %
              ("Fox.glb:Walk", "send", 24, "n/a", sendbase))
    else:
        got = daemon_range([sendbase, str(DAEMON_BYTES)], data, quick, put_fox=False)
        if got is None:
            print("%-28s %-7s %5d %12s   (%s did not answer)" % ("Fox.glb:Walk", "send", 24, "n/a", sendbase))
        else:
            send = got[0]
            print("%-28s %-7s %5d %12.2f %12s %9s   - (bare transfer: %s, the same %d bytes an answer, computes "
                  "nothing; %.2f ns a 64-byte matrix; %.2f M/s wall)" %
                  ("Fox.glb:Walk", "send", 24, send / 1e6, "", "", sendbase, DAEMON_BYTES, 1e9 / send, got[1] / 1e6))
    for d in daemons:
        got = daemon_range([d, "--listen", "127.0.0.1:0", "--threads", "1", "--log-level", "error"], data, quick)
        if got is None:
            print("%-28s %-7s %5d %12s   (%s did not answer)" % ("Fox.glb:Walk", "daemon", 24, "n/a", d))
            continue
        ratio = got[0] / fox if fox else float("nan")
        ok = got[0] >= 100e6 and fox is not None and ratio >= 40
        miss += not ok
        print("%-28s %-7s %5d %12.2f %12s %8.1fx   %s (HTTP range of %d frames, binary, %s; %.2f M/s wall)" %
              ("Fox.glb:Walk", "daemon", 24, got[0] / 1e6, "%.2f" % (fox / 1e6) if fox else "n/a", ratio,
               "PASS" if ok else "MISS", DAEMON_FRAMES, d, got[1] / 1e6))
        if send and route:
            bound = 1 / (1 / route + 1 / send)
            f = got[0] / bound
            miss += f < 0.8
            print("%-28s %-7s %5d %12.2f %12s %8.2f    %s (daemon / (1 / (1 / route %.2f + 1 / send %.2f)); "
                  "restated target 3: >= 0.8 of route + bare send)" %
                  ("Fox.glb:Walk", "bound", 24, bound / 1e6, "", f, "PASS" if f >= 0.8 else "MISS",
                   route / 1e6, send / 1e6))
    print("bench-clips: %d row(s) MISS" % miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
