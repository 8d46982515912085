#!/usr/bin/env python3
"""The README's five-minute tour, run as written.

Starts skinnerd ($SKINNERD) on 127.0.0.1, port 0, takes every command of the
README's "A five-minute tour" (its ```sh blocks) and runs it with a shell in a scratch directory that has tests/, proto/ and ./skinner
where the README expects them (the address 127.0.0.1:8080 replaced by the
daemon's), and checks each answer: a 2xx, except the one example meant to
show an error, which must be a 422 problem+json naming its field. The binary
frame range must be exactly 31 frames x 25 matrices x 64 bytes, and skinner
eval's binary output 5 results x 25 matrices x 64 bytes.

Prints `readme_tour: N passed, N failed`; exit 0 or 1.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SKINNERD = os.environ.get("SKINNERD", os.path.join(TOP, "skinnerd"))
SKINNER = os.environ.get("SKINNER", os.path.join(TOP, "skinner"))

passed = failed = 0


def check(what, cond, why=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok - %s" % what)
    else:
        failed += 1
        print("FAIL - %s: %s" % (what, why))


def tour_commands():
    text = open(os.path.join(TOP, "README.md")).read()
    section = text.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    cmds = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).split("\n"):
            line = line.strip()
            if line and not line.startswith("#"):
                cmds.append(line)
    return cmds


def main():
    with tempfile.TemporaryDirectory() as scratch:
        os.symlink(os.path.join(TOP, "tests"), os.path.join(scratch, "tests"))
        os.symlink(os.path.join(TOP, "proto"), os.path.join(scratch, "proto"))
        os.symlink(SKINNER, os.path.join(scratch, "skinner"))
        d = subprocess.Popen([SKINNERD, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
        try:
            first = d.stdout.readline()
            port = first.strip().rsplit(":", 1)[1]
            cmds = tour_commands()
            check("the tour has commands", len(cmds) >= 8, "found %d" % len(cmds))
            for cmd in cmds:
                run = cmd.replace("127.0.0.1:8080", "127.0.0.1:" + port)
                is_curl = run.startswith("curl ")
                if is_curl:
                    run += " -w '\\n%{http_code}'"
                r = subprocess.run(run, shell=True, cwd=scratch, capture_output=True, text=True, timeout=60)
                label = cmd[:100]
                if not is_curl and " -o " in run:  # skinner eval's binary output to a file
                    check(label, r.returncode == 0 and r.stdout == "", "exit %d: %s" % (r.returncode, r.stderr[:200]))
                    continue
                if not is_curl:
                    ok = r.returncode == 0 and r.stdout.startswith("{")
                    check(label, ok, "exit %d: %s" % (r.returncode, r.stderr[:200]))
                    continue
                body, _, status = r.stdout.rpartition("\n")
                if '"a"' in cmd:  # the example of a mistake
                    good = status == "422"
                    if good:
                        problem = json.loads(body)
                        good = problem.get("pointer") == "/bones/b_Head_05/rotation/1"
                    check(label, good, "status %s: %s" % (status, body[:200]))
                else:
                    check(label, status.startswith("2"), "status %s: %s" % (status, body[:200]))
            f32 = os.path.join(scratch, "run.f32")
            size = os.path.getsize(f32) if os.path.exists(f32) else -1
            check("run.f32 holds 31 frames of 25 matrices", size == 31 * 25 * 64, "size %d" % size)
            # case-fox-walk.json: one pose and a 4-frame range, 25 matrices each
            fox = os.path.join(scratch, "fox.f32")
            size = os.path.getsize(fox) if os.path.exists(fox) else -1
            check("fox.f32 holds 5 results of 25 matrices", size == 5 * 25 * 64, "size %d" % size)
        finally:
            d.terminate()
            d.wait(timeout=15)
    print("readme_tour: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
