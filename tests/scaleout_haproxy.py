#!/usr/bin/env python3
"""Scale-out behind HAProxy: routing by skeleton id, failure isolation, healing.

Runs the shipped systemd/haproxy.cfg (rewritten at its `#@` markers for
loopback and fast health checks) in front of three skinnerd on 127.0.0.1:

1. both the shipped and the generated config pass `haproxy -c`;
2. ~30 skeletons go in through HAProxy (PUT /v1/skeletons/{id}); asking
   every daemon directly shows each skeleton on exactly one of them, all three
   used, and HAProxy's Skinner-Node header names that daemon;
3. every skeleton poses through HAProxy with the answer of `skinner eval`
   for the same case and the owning daemon's own answer (a binary batch too);
4. one daemon is killed with SIGKILL; once HAProxy's checks mark it down,
   skeletons on the other two still pose (200, same bytes, same node), the
   dead node's skeletons get skinnerd's 404 from the node their ids moved
   to, and nothing else moved (consistent hashing);
5. re-uploading those through HAProxy heals them: every skeleton poses again
   with the same answers;
6. when skinnerd has --data-dir: the killed daemon restarts on its old port
   with its data directory, HAProxy marks it up, and its ids route back to it
   and pose as before without a re-upload.

Prints `scaleout_haproxy: N passed, N failed`; exit 0, 1 on failure, 77
(automake SKIP) when haproxy is not installed. Every process it starts is
killed and reaped on the way out. Loopback only; a few seconds.
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.abspath(os.environ.get("SK_TEST_DATA", HERE)))
TEMPLATE = os.path.join(TOP, "systemd", "haproxy.cfg")
SKELETON = os.path.join(TOP, "proto", "examples", "skeleton-babylon-page.json")
SKINNERD = os.environ.get("SKINNERD", "./skinnerd")
SKINNER = os.environ.get("SKINNER", "./skinner")
NODES = 3
COUNT = 30
VICTIM = 1  # index of the daemon that dies (node2)
POSE = {"bones": {"body": {"rotation": [0, 0.3, 0]}}}
BATCH = {"poses": [{}, POSE, {"bones": {"armLeft": {"rotation": [0, 0, 1.3089969389957472]}}}]}

passed = 0
failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {what}")
    else:
        failed += 1
        print(f"FAIL - {what}" + (f": {detail}" if detail else ""))
    sys.stdout.flush()
    return ok


def ids():
    return [f"char-{i:02d}" for i in range(COUNT)]


def skeleton_for(i, base):
    """A distinct skeleton per id, so that a misrouted answer cannot pass."""
    doc = json.loads(json.dumps(base))
    for bone in doc["bones"]:
        if bone["name"] == "armLeft":
            bone["rotation"] = [0, 0, 0.1 + 0.05 * i]
        if bone["name"] == "armRight":
            bone["position"] = [-1 - 0.01 * i, 2, 0]
    return doc


def request(port, method, path, body=None, accept=None, timeout=5):
    """One request on a fresh connection: (status, headers dict lowercased, bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if accept:
        headers["Accept"] = accept
    try:
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, payload
    except OSError as e:
        return None, {}, str(e).encode()
    finally:
        conn.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Procs:
    """Every child we start, killed and reaped in reverse order on exit."""

    def __init__(self):
        self.procs = []

    def start(self, argv, out, err):
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        self.procs.append(p)
        return p

    def kill(self, p, sig=signal.SIGTERM):
        if p.poll() is None:
            try:
                p.send_signal(sig)
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.procs:
            self.procs.remove(p)

    def stop_all(self):
        for p in reversed(list(self.procs)):
            self.kill(p)


def start_daemon(procs, tmp, name, listen, data_dir):
    out = open(os.path.join(tmp, f"{name}.out"), "ab")
    err = open(os.path.join(tmp, f"{name}.err"), "ab")
    start = out.tell()
    argv = [SKINNERD, "--listen", listen, "--threads", "1"]
    if data_dir:
        argv += ["--data-dir", data_dir]
    p = procs.start(argv, out, err)
    out.close()
    err.close()
    deadline = time.time() + 10
    while time.time() < deadline:
        with open(os.path.join(tmp, f"{name}.out"), "rb") as f:
            f.seek(start)
            line = f.readline().decode(errors="replace")
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)\n", line)
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.02)
    with open(os.path.join(tmp, f"{name}.err"), "rb") as f:
        sys.stderr.write(f.read().decode(errors="replace"))
    raise RuntimeError(f"{name} did not start ({' '.join(argv)})")


def render_config(template, front_port, backends, stats_sock):
    """The shipped file, rewritten at its #@ markers for this run."""
    lines = []
    servers = iter(backends)
    for line in template.splitlines():
        m = re.search(r"#@(\w+)\s*$", line)
        marker = m.group(1) if m and not line.lstrip().startswith("#") else None
        if marker == "root":
            continue
        if marker == "log":
            line = "    log stderr format short local0 notice"
        elif marker == "bind":
            line = f"    bind 127.0.0.1:{front_port}"
        elif marker == "check":
            for key, value in (("inter", "200ms"), ("fall", "2"), ("rise", "1")):
                line = re.sub(rf"\b{key} \S+", f"{key} {value}", line)
        elif marker == "server":
            addr = next(servers)  # StopIteration: the template has too few server lines
            line = re.sub(r"(\bserver \S+ )\S+", rf"\g<1>{addr}", line)
        lines.append(line)
        if line.strip() == "global":
            lines.append(f"    stats socket {stats_sock} mode 600 level admin")
    if next(servers, None) is not None:
        raise RuntimeError("the template has fewer #@server lines than daemons")
    return "\n".join(lines) + "\n"


def server_states(stats_sock):
    """{server name: status} of backend skinnerd_nodes from `show stat`."""
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(stats_sock)
        s.sendall(b"show stat\n")
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        s.close()
    except OSError:
        return {}
    rows = b"".join(chunks).decode(errors="replace").splitlines()
    if not rows or not rows[0].startswith("# "):
        return {}
    head = rows[0][2:].split(",")
    states = {}
    for row in rows[1:]:
        cols = row.split(",")
        if len(cols) < len(head):
            continue
        rec = dict(zip(head, cols))
        if rec["pxname"] == "skinnerd_nodes" and rec["svname"] not in ("BACKEND", "FRONTEND"):
            states[rec["svname"]] = rec["status"]
    return states


def wait_states(stats_sock, want, timeout=10, proc=None):
    """Waits until every server in `want` has that status (or `proc`, HAProxy,
    exits); returns whether it happened and the states last seen."""
    deadline = time.time() + timeout
    seen = {}
    while time.time() < deadline and (proc is None or proc.poll() is None):
        seen = server_states(stats_sock)
        if all(seen.get(k, "").startswith(v) for k, v in want.items()):
            return True, seen
        time.sleep(0.05)
    return False, seen


def expected_answers(tmp, docs):
    """`skinner eval` of each skeleton with the same pose op, or None without skinner."""
    if not os.access(SKINNER, os.X_OK):
        return None
    out = {}
    for sid, doc in docs.items():
        case = {"skeleton": doc, "ops": [dict(op="pose", **POSE)]}
        path = os.path.join(tmp, "case.json")
        with open(path, "w") as f:
            json.dump(case, f)
        r = subprocess.run([SKINNER, "eval", path], capture_output=True, timeout=20)
        if r.returncode != 0:
            return None
        out[sid] = json.loads(r.stdout)["results"][0]
    return out


def run(procs, tmp):
    with open(TEMPLATE) as f:
        template = f.read()
    with open(SKELETON) as f:
        base = json.load(f)

    r = subprocess.run(["haproxy", "-c", "-q", "-f", TEMPLATE], capture_output=True, text=True)
    check(r.returncode == 0, "the shipped systemd/haproxy.cfg passes haproxy -c", r.stderr.strip())

    help_text = subprocess.run([SKINNERD, "--help"], capture_output=True, text=True).stdout
    persistent = "--data-dir" in help_text

    names = [f"node{i + 1}" for i in range(NODES)]
    daemons, ports, data_dirs = [], [], []
    for name in names:
        data_dir = os.path.join(tmp, f"{name}.data") if persistent else None
        if data_dir:
            os.mkdir(data_dir)
        p, port = start_daemon(procs, tmp, name, "127.0.0.1:0", data_dir)
        daemons.append(p)
        ports.append(port)
        data_dirs.append(data_dir)
    print(f"# skinnerd on ports {ports}" + (" with --data-dir" if persistent else ""))

    stats_sock = os.path.join(tmp, "haproxy.sock")
    cfg_path = os.path.join(tmp, "haproxy.cfg")
    haproxy = None
    for attempt in range(3):  # the frontend port is picked free, then bound: retry a lost race
        front = free_port()
        with open(cfg_path, "w") as f:
            f.write(render_config(template, front, [f"127.0.0.1:{p}" for p in ports], stats_sock))
        if attempt == 0:
            r = subprocess.run(["haproxy", "-c", "-q", "-f", cfg_path], capture_output=True, text=True)
            check(r.returncode == 0, "the generated config passes haproxy -c", r.stderr.strip())
        err = open(os.path.join(tmp, "haproxy.err"), "wb")
        haproxy = procs.start(["haproxy", "-db", "-f", cfg_path], subprocess.DEVNULL, err)
        err.close()
        up, seen = wait_states(stats_sock, {n: "UP" for n in names}, timeout=5, proc=haproxy)
        if up or haproxy.poll() is None:
            break
        procs.kill(haproxy)
        haproxy = None
        with open(os.path.join(tmp, "haproxy.err"), errors="replace") as f:
            if "bind" not in f.read():
                break
    if not check(haproxy is not None and up, "HAProxy runs and marks all three nodes UP", str(seen)):
        return
    print(f"# haproxy frontend on port {front}")

    # POST /v1/skeletons names the skeleton by its content, which the proxy
    # cannot route by: the shipped config refuses it with a pointer to PUT.
    st, hdrs, body = request(front, "POST", "/v1/skeletons", base)
    check(st == 405 and "problem+json" in hdrs.get("content-type", "") and hdrs.get("allow") == "GET"
          and json.loads(body).get("status") == 405 and b"PUT" in body,
          "POST /v1/skeletons through HAProxy is a 405 pointing at PUT", f"{st} {body[:200]!r}")

    docs = {sid: skeleton_for(i, base) for i, sid in enumerate(ids())}
    via = {}
    bad = []
    for sid, doc in docs.items():
        st, hdrs, body = request(front, "PUT", f"/v1/skeletons/{sid}", doc)
        via[sid] = hdrs.get("skinner-node")
        if st != 201:
            bad.append(f"{sid}: {st} {body[:120]!r}")
    check(not bad, f"{COUNT} skeletons PUT through HAProxy answer 201", "; ".join(bad[:5]))

    def placement(alive):
        """{id: [node indexes holding it]} by asking each live daemon directly."""
        where = {}
        for sid in docs:
            where[sid] = [i for i in alive
                          if request(ports[i], "GET", f"/v1/skeletons/{sid}")[0] == 200]
        return where

    where = placement(range(NODES))
    owner = {sid: nodes[0] for sid, nodes in where.items() if len(nodes) == 1}
    check(len(owner) == COUNT, "each skeleton lives on exactly one daemon",
          str({s: n for s, n in where.items() if len(n) != 1}))
    spread = [sum(1 for o in owner.values() if o == i) for i in range(NODES)]
    print(f"# skeletons per node: {dict(zip(names, spread))}")
    check(all(spread), "skeletons are spread over all three daemons", str(spread))
    check(all(via[s] == names[o] for s, o in owner.items()),
          "HAProxy's Skinner-Node header names the daemon that holds each skeleton",
          str({s: (via[s], names[o]) for s, o in owner.items() if via[s] != names[o]}))

    expected = expected_answers(tmp, docs)
    answers, bad = {}, []
    for sid in docs:
        st, hdrs, body = request(front, "POST", f"/v1/skeletons/{sid}/pose", POSE)
        answers[sid] = body
        direct = request(ports[owner.get(sid, 0)], "POST", f"/v1/skeletons/{sid}/pose", POSE)
        if st != 200 or body != direct[2]:
            bad.append(f"{sid}: {st}, same as the daemon's own answer: {body == direct[2]}")
        elif expected is not None and json.loads(body) != expected[sid]:
            bad.append(f"{sid}: differs from skinner eval")
    check(not bad, "every skeleton poses through HAProxy with its daemon's answer"
          + (" and skinner eval's" if expected is not None else " (no ./skinner: eval not compared)"),
          "; ".join(bad[:5]))
    check(len(set(answers.values())) == COUNT, "the answers differ per skeleton (no mix-ups possible)")

    # The key is the decoded id: skinnerd decodes percent-escapes, so must the hash.
    bad = []
    for sid in docs:
        st, hdrs, body = request(front, "POST", f"/v1/skeletons/{sid.replace('-', '%2D')}/pose", POSE)
        if st != 200 or body != answers[sid]:
            bad.append(f"{sid}: {st} via {hdrs.get('skinner-node')}")
    check(not bad, "percent-encoded ids (/v1/skeletons/char%2D00/pose) reach the same daemon", "; ".join(bad[:5]))

    sid0 = ids()[0]
    st, hdrs, body = request(front, "POST", f"/v1/skeletons/{sid0}/poses", BATCH, accept="application/octet-stream")
    direct = request(ports[owner.get(sid0, 0)], "POST", f"/v1/skeletons/{sid0}/poses", BATCH,
                     accept="application/octet-stream")
    check(st == 200 and hdrs.get("content-type") == "application/octet-stream"
          and len(body) == len(BATCH["poses"]) * 4 * 16 * 4 and body == direct[2],
          "a binary batch through HAProxy is byte for byte the daemon's", f"{st} {len(body)} bytes")

    # --- a node dies -------------------------------------------------------
    victim = names[VICTIM]
    lost = sorted(s for s, o in owner.items() if o == VICTIM)
    kept = sorted(s for s, o in owner.items() if o != VICTIM)
    survivors = [i for i in range(NODES) if i != VICTIM]
    procs.kill(daemons[VICTIM], signal.SIGKILL)
    t0 = time.time()
    down, seen = wait_states(stats_sock, {victim: "DOWN"}, timeout=10)
    check(down, f"HAProxy marks {victim} DOWN after kill -9", str(seen))
    print(f"# {victim} killed: {len(lost)} skeletons lost, {len(kept)} on the others; "
          f"marked down after {time.time() - t0:.2f}s")

    bad = []
    for sid in kept:
        st, hdrs, body = request(front, "POST", f"/v1/skeletons/{sid}/pose", POSE)
        if st != 200 or body != answers[sid] or hdrs.get("skinner-node") != names[owner[sid]]:
            bad.append(f"{sid}: {st} via {hdrs.get('skinner-node')}")
    check(not bad, "skeletons on the surviving daemons pose as before (200, same bytes, same node)",
          "; ".join(bad[:5]))

    moved_to, bad = {}, []
    for sid in lost:
        st, hdrs, body = request(front, "POST", f"/v1/skeletons/{sid}/pose", POSE)
        node = hdrs.get("skinner-node")
        moved_to[sid] = node
        is_problem = "problem+json" in hdrs.get("content-type", "")
        if st != 404 or not is_problem or node not in [names[i] for i in survivors]:
            bad.append(f"{sid}: {st} via {node}")
    check(not bad, f"{victim}'s skeletons get skinnerd's 404 from the node their id moved to",
          "; ".join(bad[:5]))

    bad = []
    for sid in lost:
        st, hdrs, body = request(front, "PUT", f"/v1/skeletons/{sid}", docs[sid])
        if st != 201 or hdrs.get("skinner-node") != moved_to[sid]:
            bad.append(f"{sid}: {st} via {hdrs.get('skinner-node')}")
    check(not bad, f"re-uploading {victim}'s skeletons through HAProxy stores them (201)", "; ".join(bad[:5]))

    bad = []
    for sid in docs:
        st, hdrs, body = request(front, "POST", f"/v1/skeletons/{sid}/pose", POSE)
        if st != 200 or body != answers[sid]:
            bad.append(f"{sid}: {st}")
    check(not bad, "healed: every skeleton poses again with the same answer", "; ".join(bad[:5]))

    where = placement(survivors)
    bad = [sid for sid in kept if where[sid] != [owner[sid]]]
    bad += [sid for sid in lost if [names[i] for i in where[sid]] != [moved_to[sid]]]
    check(not bad, "only the dead node's skeletons moved, each to exactly one survivor",
          str({s: where[s] for s in bad[:5]}))

    # --- the node comes back with its data directory ------------------------
    if not persistent:
        print("# skip: skinnerd has no --data-dir; the restart-with-data phase is not run")
        return
    daemons[VICTIM], _ = start_daemon(procs, tmp, victim, f"127.0.0.1:{ports[VICTIM]}", data_dirs[VICTIM])
    up, seen = wait_states(stats_sock, {victim: "UP"}, timeout=10)
    check(up, f"{victim} restarts with its --data-dir and HAProxy marks it UP", str(seen))
    bad = []
    for sid in docs:
        st, hdrs, body = request(front, "POST", f"/v1/skeletons/{sid}/pose", POSE)
        if st != 200 or body != answers[sid] or hdrs.get("skinner-node") != names[owner[sid]]:
            bad.append(f"{sid}: {st} via {hdrs.get('skinner-node')}")
    check(not bad, f"{victim}'s skeletons route back to it and pose from its data directory",
          "; ".join(bad[:5]))


def main():
    if shutil.which("haproxy") is None:
        print("SKIP: haproxy is not installed (./setup deps installs it); scale-out test not run")
        print("scaleout_haproxy: 0 passed, 0 failed")
        return 77
    # make check's timeout or Ctrl-C: unwind through the cleanup below.
    def stop(*_):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second signal must not cut the cleanup short
        sys.exit(1)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    procs = Procs()
    tmp = tempfile.mkdtemp(prefix="sk-scaleout-")
    try:
        run(procs, tmp)
    except Exception as e:  # a harness failure is a test failure, logs below
        check(False, "harness", f"{type(e).__name__}: {e}")
    except SystemExit:
        check(False, "interrupted by a signal")
    finally:
        procs.stop_all()
        if failed:
            for name in sorted(os.listdir(tmp)):
                if name.endswith((".err", ".cfg")):
                    with open(os.path.join(tmp, name), errors="replace") as f:
                        text = f.read()
                    if text.strip():
                        print(f"# --- {name} ---\n" + "\n".join("# " + l for l in text.splitlines()[-40:]))
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"scaleout_haproxy: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
