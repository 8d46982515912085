#!/usr/bin/env python3
"""make bench-clips: one run of `skinner bench --clips --json` and of
tests/oracle/bench_clips.mjs (Babylon.js, Node) on the same clips and frames,
printed as one table with issue 12's targets and PASS/MISS:
  pipeline >= 100 M bone matrices per CPU-second, >= 40x Babylon.js,
  `skinner frames` to a file in page cache >= 90 % of its in-memory rate.

  bench_clips.py SKINNER TOP_SRCDIR [--quick]"""
import json
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    skinner, top = sys.argv[1], sys.argv[2]
    quick = ["--quick"] if "--quick" in sys.argv[3:] else []
    data = os.path.join(top, "tests", "data")
    rows = json.loads(subprocess.run([skinner, "bench", "--clips", "--json", "--data", data] + quick,
                                     check=True, capture_output=True, text=True).stdout)
    babylon = {}
    oracle = os.path.join(top, "tests", "oracle", "bench_clips.mjs")
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
    for r in rows:
        b = babylon.get(r["clip"])
        rate = r["rate"]
        if r["row"].startswith("ops-"):  # the Bone API's per-frame cost (no target)
            print("%-28s %-7s %5d %12.2f %12s %8.2fx   - (%.2f us a frame, x the plain range)" %
                  (r["clip"], r["row"][4:], r["bones"], rate / 1e6, "", r["ratio"], r["us_per_frame"]))
            continue
        if r["row"] == "frames-file":
            ok = r["ratio"] >= 0.9
            miss += not ok
            print("%-28s %-7s %5d %12.2f %12s %8.1f%%   %s (skinner frames to a file vs %.2f M/s in memory, wall)" %
                  (r["clip"], "file", r["bones"], rate / 1e6, "", 100 * r["ratio"], "PASS" if ok else "MISS",
                   r["mem_rate"] / 1e6))
            continue
        ratio = rate / b if b else float("nan")
        verdict = "-"
        if r["row"] != "sample":
            ok = rate >= 100e6 and b is not None and ratio >= 40
            miss += not ok
            verdict = "%s (%s M/s, %s 40x)" % ("PASS" if ok else "MISS", ">=" if rate >= 100e6 else "<",
                                               ">=" if b and ratio >= 40 else "<")
        print("%-28s %-7s %5d %12.2f %12s %8.1fx   %s" % (r["clip"], r["row"], r["bones"], rate / 1e6,
                                                          "%.2f" % (b / 1e6) if b else "n/a", ratio, verdict))
    print("bench-clips: %d row(s) MISS" % miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
