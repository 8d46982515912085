#!/usr/bin/env python3
"""HTTP benchmark of skinnerd (issue 4); `make bench-http`. Not a test.

    tests/bench/http_bench.py [--skinnerd ./skinnerd] [--skinner ./skinner]
        [--ceiling tests/bench/mhd_ceiling] [--duration 10] [--connections 32] [--rounds 5]

With wrk (-t1 -cN -dS, POST bodies from a Lua script) on loopback, against a
65-bone skeleton: requests/s and p50/p99 latency for a single pose (JSON and
binary answer) and a batch of 64 poses (JSON and binary), each pose moving
one bone (every answer still carries all 65 + 1 matrices), plus the same
binary rows for full animation frames (a rotation on all 65 bones, 5 KB of
JSON per pose), each run side by side with two ceilings answering a body of
exactly the same size:
  * mhd: tests/bench/mhd_ceiling.c, a minimal libmicrohttpd server (epoll, one
    internal thread) that consumes the same POST body and queues a fixed
    answer on the final handler call (the ceiling of our HTTP library);
  * nginx: one worker serving a static file (GET; nginx refuses POST to a
    static file), the ceiling of HTTP on this machine.
The servers of a row take turns in --rounds short runs (duration/rounds
seconds each) and every figure is the median over a server's rounds, so a
drift of the machine's speed hits skinnerd and its ceilings alike.
Then the target ratios of issue 4, the batch kernel's own one-core rate from
`skinner bench --json` when available, whether gzip would pay, and one JSON
line with everything. Every server listens on 127.0.0.1 on a free port and
is stopped at exit (also on Ctrl-C).
"""

import argparse
import atexit
import json
import math
import os
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib

BONES = 65
BATCH = 64
children = []  # every process we started, stopped at exit


def stop_all():
    for p in children:
        if p.poll() is None:
            p.terminate()
    for p in children:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    children.clear()


def on_signal(sig, frame):
    stop_all()
    sys.exit(128 + sig)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_listening(argv, log):
    """Starts a server that prints 'listening on 127.0.0.1:PORT' first."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
    children.append(p)
    line = b""
    deadline = time.time() + 10
    while time.time() < deadline and not line.endswith(b"\n"):
        if select.select([p.stdout], [], [], 0.2)[0]:
            c = os.read(p.stdout.fileno(), 1)
            if not c:
                break
            line += c
        elif p.poll() is not None:
            break
    m = re.match(rb"listening on 127\.0\.0\.1:(\d+)", line)
    if not m:
        raise SystemExit("%s did not start (first line %r)" % (argv[0], line))
    return p, int(m.group(1))


def wait_port(port, proc, what):
    deadline = time.time() + 10
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit("%s exited with status %d" % (what, proc.returncode))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("%s does not accept connections on %d" % (what, port))


def request(port, method, path, headers, body=None):
    """(status, headers, body) of one request on its own connection."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1", "Connection: close"]
    head += ["%s: %s" % kv for kv in headers.items()]
    if body is not None:
        head.append("Content-Length: %d" % len(body))
    s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + (body or b""))
    data = b""
    while True:
        c = s.recv(1 << 20)
        if not c:
            break
        data += c
    s.close()
    h, _, b = data.partition(b"\r\n\r\n")
    lines = h.decode("iso-8859-1").split("\r\n")
    hdrs = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    if "chunked" in hdrs.get("transfer-encoding", ""):
        out = b""
        while True:
            size, _, b = b.partition(b"\r\n")
            n = int(size.split(b";")[0], 16)
            if n == 0:
                break
            out, b = out + b[:n], b[n + 2:]
        b = out
    return int(lines[0].split()[1]), hdrs, b


# ---- the 65-bone skeleton and its poses -------------------------------------------

def quat_axis_angle(axis, angle):
    n = math.sqrt(sum(a * a for a in axis))
    s = math.sin(angle / 2) / n
    return [round(axis[0] * s, 6), round(axis[1] * s, 6), round(axis[2] * s, 6), round(math.cos(angle / 2), 6)]


def skeleton65():
    """A humanoid-shaped tree of 65 bones: hips, a 4-bone spine, neck, head
    with jaw and head top, two arms of shoulder/upper/lower/hand with five
    4-joint fingers, two legs of upper/lower/foot/toe, listed parent-first."""
    bones = []

    def add(name, parent, pos):
        bones.append({"name": name, "parent": parent, "position": pos,
                      "rotationQuaternion": quat_axis_angle([0.3, 1, 0.2], 0.1 * (len(bones) % 7 - 3))})
        return name

    hips = add("hips", None, [0, 1, 0])
    p = hips
    for i in range(4):
        p = add("spine%d" % i, p, [0, 0.12, 0])
    chest = p
    head = add("head", add("neck", chest, [0, 0.1, 0]), [0, 0.1, 0])
    add("jaw", head, [0, -0.03, 0.05])
    add("headTop", head, [0, 0.12, 0])
    for side, sx in (("L", 1), ("R", -1)):
        sh = add("shoulder." + side, chest, [sx * 0.08, 0.05, 0])
        hand = add("hand." + side, add("lowerArm." + side, add("upperArm." + side, sh, [sx * 0.1, 0, 0]),
                                       [sx * 0.28, 0, 0]), [sx * 0.25, 0, 0])
        for f in ("thumb", "index", "middle", "ring", "little"):
            q = hand
            for j in range(4):
                q = add("%s%d.%s" % (f, j, side), q, [sx * 0.03, 0, 0.01 * j])
        add("toe." + side, add("foot." + side, add("lowerLeg." + side, add("upperLeg." + side, hips, [sx * 0.1, -0.05, 0]),
                                                   [0, -0.42, 0]), [0, -0.4, 0]), [0, -0.05, 0.12])
    assert len(bones) == BONES, len(bones)
    return {"bones": bones}


def small_pose(rng):
    """A pose that moves one bone."""
    return {"bones": {"upperArm.L": {"rotationQuaternion": quat_axis_angle(
        [rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)], rng.uniform(-1, 1))}}}


def pose_for(skel, rng):
    """An animation frame: a rotation on every bone, a root position."""
    bones = {}
    for b in skel["bones"]:
        axis = [rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)]
        bones[b["name"]] = {"rotationQuaternion": quat_axis_angle(axis, rng.uniform(-0.6, 0.6))}
    bones["hips"]["position"] = [round(rng.uniform(-0.1, 0.1), 5), 1, round(rng.uniform(-0.1, 0.1), 5)]
    return {"bones": bones}


# ---- wrk -------------------------------------------------------------------------------

LUA = r"""
wrk.method = "%(method)s"
%(body)s
%(headers)s
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests": %%d, "duration_us": %%d, "p50_us": %%.1f, "p99_us": %%.1f, "non2xx": %%d, "socket_errors": %%d, "bytes": %%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout, summary.bytes))
end
"""


def lua_script(tmp, name, method, body_path, headers):
    body = ""
    if body_path:
        body = 'local f = assert(io.open("%s", "rb")); wrk.body = f:read("*a"); f:close()' % body_path
    hdr = "\n".join('wrk.headers["%s"] = "%s"' % kv for kv in headers.items())
    path = os.path.join(tmp, name + ".lua")
    with open(path, "w") as f:
        f.write(LUA % {"method": method, "body": body, "headers": hdr})
    return path


HEAD_FMT = "%-22s %-9s %9s %10s %9s %9s %10s %8s"
ROW_FMT = "%-22s %-9s %9d %10.0f %9.3f %9.3f %10s %8d"


def proc_cpu(pid):
    """CPU seconds (user + system) the process has used so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def wrk(url, script, duration, conns, warmup=1, pid=None):
    if warmup:
        subprocess.run(["wrk", "-t1", "-c%d" % conns, "-d%ds" % warmup, "-s", script, url],
                       capture_output=True, text=True)
    c0 = proc_cpu(pid) if pid else None
    r = subprocess.run(["wrk", "-t1", "-c%d" % conns, "-d%ds" % duration, "-s", script, url],
                       capture_output=True, text=True)
    c1 = proc_cpu(pid) if pid else None
    m = re.search(r"WRKJSON (\{.*\})", r.stdout)
    if not m:
        raise SystemExit("wrk failed on %s:\n%s%s" % (url, r.stdout, r.stderr))
    d = json.loads(m.group(1))
    d["rps"] = d["requests"] / (d["duration_us"] / 1e6)
    # Server CPU per request (the requests wrk counted; a few more were in flight).
    d["cpu_us_per_req"] = (c1 - c0) / d["requests"] * 1e6 if pid and d["requests"] else None
    return d


# ---- nginx ---------------------------------------------------------------------------------

def start_nginx(tmp, sizes, log):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        return None, None
    www = os.path.join(tmp, "www")
    os.makedirs(www, exist_ok=True)
    for n in sizes:
        with open(os.path.join(www, "%d.bin" % n), "wb") as f:
            f.write(bytes(ord("a") + i % 26 for i in range(n)))
    port = free_port()
    user = ""
    if os.geteuid() == 0:  # workers would drop to nobody, who cannot read our temp dir
        user = "user root;"
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write("""%(user)s
worker_processes 1;
daemon off;
master_process on;
pid %(tmp)s/nginx.pid;
error_log %(tmp)s/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %(tmp)s/body; proxy_temp_path %(tmp)s/proxy; fastcgi_temp_path %(tmp)s/fastcgi;
  uwsgi_temp_path %(tmp)s/uwsgi; scgi_temp_path %(tmp)s/scgi;
  default_type application/octet-stream;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 100000000; keepalive_timeout 120s;
  server { listen 127.0.0.1:%(port)d; root %(www)s; }
}
""" % {"user": user, "tmp": tmp, "port": port, "www": www})
    p = subprocess.Popen([nginx, "-p", tmp, "-c", conf, "-e", os.path.join(tmp, "nginx-error.log")],
                         stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    children.append(p)
    wait_port(port, p, "nginx")
    return p, port


# ---- the batch kernel's own rate ---------------------------------------------------------

def kernel_rate(skinner, quick=False):
    """Best one-core exact bone-matrices/s for 65 bones x 64 poses from `skinner bench --json`."""
    if not (skinner and os.access(skinner, os.X_OK)):
        return None, "%s not found" % skinner
    try:
        r = subprocess.run([skinner, "bench", "--json"] + (["--quick"] if quick else []), capture_output=True,
                           text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "skinner bench --json timed out"
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    if r.returncode != 0 or not lines:
        return None, "skinner bench --json failed (%s)" % (r.stderr.strip().splitlines() or ["no output"])[-1]
    try:
        doc = json.loads(lines[-1])
    except ValueError:
        return None, "last line of skinner bench --json is not JSON"
    rows = doc if isinstance(doc, list) else next((doc[k] for k in ("rows", "results", "benchmarks") if
                                                   isinstance(doc.get(k), list)), [])
    # HTTP poses are TRS overrides: compare with the kernel on TRS input when it reports one.
    if any(isinstance(r, dict) and r.get("input") == "trs" for r in rows):
        rows = [r for r in rows if isinstance(r, dict) and r.get("input") == "trs"]
    # ... and with the precision the daemon computes: exact (Babylon's bits). The opt-in float32
    # rows ("precision": "fast") are a kernel skinnerd never runs for a request.
    if any(isinstance(r, dict) and r.get("precision") == "exact" for r in rows):
        rows = [r for r in rows if isinstance(r, dict) and r.get("precision") == "exact"]
    best = None
    for row in rows:
        if not isinstance(row, dict) or row.get("bones") != BONES or row.get("poses") != BATCH or \
                row.get("threads", 1) != 1:
            continue
        rate = None
        for k in ("bone_matrices_per_s", "bone_matrices_per_sec", "matrices_per_s", "mat_per_s"):
            if isinstance(row.get(k), (int, float)):
                rate = float(row[k])
                break
        if rate is None and isinstance(row.get("ns_per_bone"), (int, float)) and row["ns_per_bone"] > 0:
            rate = 1e9 / row["ns_per_bone"]
        if rate is None and isinstance(row.get("ns_per_pose"), (int, float)) and row["ns_per_pose"] > 0:
            rate = BONES * 1e9 / row["ns_per_pose"]
        if rate is None and isinstance(row.get("poses_per_s"), (int, float)):
            rate = BONES * float(row["poses_per_s"])
        if rate is not None and (best is None or rate > best[0]):
            best = (rate, row.get("path") or row.get("kernel") or row.get("name"))
    if best is None:
        return None, "no row with bones %d, poses %d, threads 1 in skinner bench --json" % (BONES, BATCH)
    return best, None


# ---- gzip ------------------------------------------------------------------------------------

def gzip_cost(data, level, min_time=0.3):
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    out = c.compress(data) + c.flush()
    n = 0
    t0 = time.process_time()
    while True:
        c = zlib.compressobj(level, zlib.DEFLATED, 31)
        c.compress(data)
        c.flush()
        n += 1
        t = time.process_time() - t0
        if t >= min_time:
            break
    d0 = time.process_time()
    for _ in range(n):
        zlib.decompress(out, 31)
    return len(out), t / n * 1e6, (time.process_time() - d0) / n * 1e6


# ---- main ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skinnerd", default=os.environ.get("SKINNERD", "./skinnerd"))
    ap.add_argument("--skinner", default=os.environ.get("SKINNER", "./skinner"))
    ap.add_argument("--ceiling", default=os.environ.get("MHD_CEILING", "tests/bench/mhd_ceiling"))
    ap.add_argument("--duration", type=int, default=int(os.environ.get("DURATION", "10")))
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "5")),
                    help="rounds per row: the servers alternate, each round lasts duration/rounds seconds, "
                         "figures are medians over the rounds")
    ap.add_argument("--kernel-quick", action="store_true",
                    help="skinner bench --quick for the kernel rate (a smoke run, not figures)")
    ap.add_argument("--no-first-call", action="store_true",
                    help="skip the extra run of the ceiling queueing its answer on the first call")
    a = ap.parse_args()
    for tool in ("wrk",):
        if shutil.which(tool) is None:
            raise SystemExit("bench-http needs %s (Debian package %s)" % (tool, tool))
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    atexit.register(stop_all)
    tmp = tempfile.mkdtemp(prefix="skinnerd-bench-")
    atexit.register(shutil.rmtree, tmp, True)
    log = open(os.path.join(tmp, "servers.log"), "wb")

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print("# CPU: %s, %d cores; wrk -t1 -c%d on loopback (wrk shares the cores); per row and server %d rounds of "
          "%ds, alternating, medians" % (cpu, os.cpu_count(), a.connections, a.rounds, max(1, a.duration // a.rounds)))

    sd, sport = start_listening([a.skinnerd, "--listen", "127.0.0.1:0", "--max-body", str(16 << 20)], log)
    skel = skeleton65()
    st, _, b = request(sport, "PUT", "/v1/skeletons/bench65", {"Content-Type": "application/json"},
                       json.dumps(skel).encode())
    if st not in (200, 201):
        raise SystemExit("PUT of the 65-bone skeleton: %d %s" % (st, b[:300]))
    rng = random.Random(4242)
    bodies = {
        # The headline rows: a pose that moves one bone (the answer still
        # carries all 65 + 1 matrices), so the rows measure the HTTP path
        # and the answer, not JSON input parsing.
        "single": json.dumps(small_pose(rng)).encode(),
        "batch": json.dumps({"poses": [small_pose(rng) for _ in range(BATCH)]}).encode(),
        # A full animation frame: a rotation on every bone (5 KB of JSON per pose).
        "frame": json.dumps(pose_for(skel, rng)).encode(),
        "frames": json.dumps({"poses": [pose_for(skel, rng) for _ in range(BATCH)]}).encode(),
    }
    files = {}
    for name, data in bodies.items():
        files[name] = os.path.join(tmp, name + ".json")
        with open(files[name], "wb") as f:
            f.write(data)

    J = "application/json"
    BIN = "application/octet-stream"
    ALL = ("skinnerd", "mhd", "nginx")
    rows = [
        ("single pose, JSON", "/v1/skeletons/bench65/pose", "single", J, ALL),
        ("single pose, binary", "/v1/skeletons/bench65/pose", "single", BIN, ALL),
        ("batch of 64, JSON", "/v1/skeletons/bench65/poses", "batch", J, ALL),
        ("batch of 64, binary", "/v1/skeletons/bench65/poses", "batch", BIN, ALL),
        # A rotation on every bone: no matrix equals the stored pose's, so
        # every float is printed (the one-bone rows copy the stored pose's
        # text for the 43 bones outside the moved arm).
        ("full frame, JSON", "/v1/skeletons/bench65/pose", "frame", J, ("skinnerd", "mhd")),
        ("full frame, binary", "/v1/skeletons/bench65/pose", "frame", BIN, ("skinnerd", "mhd")),
        ("64 full frames, binary", "/v1/skeletons/bench65/poses", "frames", BIN, ("skinnerd", "mhd")),
    ]
    sizes = {}
    answers = {}
    for label, path, body, accept, _ in rows:
        with open(files[body], "rb") as f:
            data = f.read()
        st, hdr, ans = request(sport, "POST", path, {"Content-Type": J, "Accept": accept}, data)
        if st != 200:
            raise SystemExit("%s: %d %s" % (label, st, ans[:300]))
        sizes[label] = len(ans)
        answers[label] = ans
    # Answers for the gzip question: realistic (full-frame) matrices, which
    # compress far less than the near-identity answers of one-bone poses.
    for label, path, body in (("full frame, JSON", "/v1/skeletons/bench65/pose", "frame"),
                              ("64 full frames, JSON", "/v1/skeletons/bench65/poses", "frames")):
        with open(files[body], "rb") as f:
            st, _, ans = request(sport, "POST", path, {"Content-Type": J, "Accept": J}, f.read())
        if st != 200:
            raise SystemExit("%s: %d %s" % (label, st, ans[:300]))
        answers[label] = ans
    want_bin = 4 * 16 * (BONES + 1)
    if sizes["single pose, binary"] != want_bin or sizes["batch of 64, binary"] != BATCH * want_bin:
        print("# WARNING: binary answers of %d and %d bytes, expected %d and %d" % (
            sizes["single pose, binary"], sizes["batch of 64, binary"], want_bin, BATCH * want_bin))

    mhd = None
    if os.access(a.ceiling, os.X_OK):
        mhd, mport = start_listening([a.ceiling], log)
    else:
        print("# %s not built: no libmicrohttpd ceiling" % a.ceiling)
    ngx, nport = start_nginx(tmp, sorted(set(sizes.values())), log)
    if ngx is None:
        print("# nginx not installed: no nginx ceiling")

    results = []
    print("# request bodies: single pose %d bytes, batch %d bytes; full frame %d bytes, 64 full frames %d bytes" % (
        len(bodies["single"]), len(bodies["batch"]), len(bodies["frame"]), len(bodies["frames"])))
    print(HEAD_FMT % ("row", "server", "answer B", "req/s", "p50 ms", "p99 ms", "CPU us/req", "non-2xx"))
    for label, path, body, accept, servers in rows:
        n = sizes[label]
        hdrs = {"Content-Type": J, "Accept": accept}
        runs = [("skinnerd", sd.pid, "http://127.0.0.1:%d%s" % (sport, path),
                 lua_script(tmp, "s", "POST", files[body], hdrs))]
        if mhd:
            runs.append(("mhd", mhd.pid, "http://127.0.0.1:%d/%d" % (mport, n),
                         lua_script(tmp, "m", "POST", files[body], hdrs)))
        if ngx and "nginx" in servers:
            runs.append(("nginx", None, "http://127.0.0.1:%d/%d.bin" % (nport, n), lua_script(tmp, "n", "GET", None, {})))
        row = {"row": label, "answer_bytes": n, "request_bytes": os.path.getsize(files[body])}
        # The servers take turns in short rounds and each figure is the median
        # over its rounds: this VM's speed drifts by tens of percent within a
        # minute, which one long run per server turned into ratio noise.
        per = {server: [] for server, _, _, _ in runs}
        for rnd in range(a.rounds):
            for server, pid, url, script in runs:
                # Only skinnerd gets a warm-up second (its cache and allocator); the ceilings need none.
                warm = 1 if server == "skinnerd" and rnd == 0 else 0
                per[server].append(wrk(url, script, max(1, a.duration // a.rounds), a.connections, warmup=warm,
                                       pid=pid))
        for server, _, _, _ in runs:
            rs = per[server]
            r = {k: median([x[k] for x in rs]) for k in ("rps", "p50_us", "p99_us")}
            cpu_us = [x["cpu_us_per_req"] for x in rs if x["cpu_us_per_req"] is not None]
            r["cpu_us_per_req"] = median(cpu_us) if cpu_us else None
            r["non2xx"] = sum(x["non2xx"] for x in rs)
            r["socket_errors"] = sum(x["socket_errors"] for x in rs)
            r["rounds_rps"] = [round(x["rps"]) for x in rs]
            row[server] = r
            print(ROW_FMT % (label, server, n, r["rps"], r["p50_us"] / 1e3, r["p99_us"] / 1e3,
                             "%.1f" % r["cpu_us_per_req"] if r["cpu_us_per_req"] is not None else "-", r["non2xx"]))
            sys.stdout.flush()
        results.append(row)
    extra = None
    if mhd and not a.no_first_call:
        # The choice issue 4 measured: the same ceiling queueing its answer on the first call.
        fc, fport = start_listening([a.ceiling, "--first-call"], log)
        n = sizes["single pose, binary"]
        wait_port(fport, fc, "mhd_ceiling --first-call")
        r = wrk("http://127.0.0.1:%d/%d" % (fport, n),
                lua_script(tmp, "f", "POST", files["single"], {"Content-Type": J, "Accept": BIN}),
                a.duration, a.connections)
        extra = {k: r[k] for k in ("rps", "p50_us", "p99_us", "non2xx", "socket_errors")}
        print(ROW_FMT % ("(answer on 1st call)", "mhd", n, r["rps"], r["p50_us"] / 1e3, r["p99_us"] / 1e3, "-",
                         r["non2xx"]))
        fc.terminate()
    stop_all()

    # ---- targets ----
    by = {r["row"]: r for r in results}
    targets = []

    def ratio(label):
        # Paired: skinnerd's round i against the ceiling's round i (run right
        # after it), median over the rounds, so the machine's drift between
        # rounds cancels. The ratio of the two medians is reported beside it.
        r = by[label]
        if "mhd" not in r:
            return None
        pairs = [s / m for s, m in zip(r["skinnerd"]["rounds_rps"], r["mhd"]["rounds_rps"]) if m > 0]
        return median(pairs) if pairs else None

    def ratio_of_medians(label):
        r = by[label]
        return r["skinnerd"]["rps"] / r["mhd"]["rps"] if "mhd" in r else None

    rb = ratio("single pose, binary")
    p99 = by["single pose, binary"]["skinnerd"]["p99_us"] / 1e3
    targets.append({"target": "single pose binary >= 80% of the mhd ceiling, p99 <= 2 ms", "ratio": rb,
                    "ratio_of_medians": ratio_of_medians("single pose, binary"), "p99_ms": p99, "met": rb is not None and rb >= 0.8 and p99 <= 2.0})
    rj = ratio("single pose, JSON")
    targets.append({"target": "single pose JSON >= 40% of the mhd ceiling", "ratio": rj,
                    "ratio_of_medians": ratio_of_medians("single pose, JSON"),
                    "met": rj is not None and rj >= 0.4})
    http_rate = by["batch of 64, binary"]["skinnerd"]["rps"] * BATCH * BONES
    print("# running %s bench --json for the batch kernel's own rate ..." % a.skinner)
    sys.stdout.flush()
    kr, why = kernel_rate(a.skinner, a.kernel_quick)
    t = {"target": "batch-64 binary bone matrices/s over HTTP >= 30% of the batch kernel on one core",
         "http_bone_matrices_per_s": http_rate}
    mhd_b = by["batch of 64, binary"].get("mhd")
    ceiling_rate = mhd_b["rps"] * BATCH * BONES if mhd_b else None
    if kr:
        t.update(kernel_bone_matrices_per_s=kr[0], kernel_path=kr[1], ratio=http_rate / kr[0],
                 met=http_rate / kr[0] >= 0.3,
                 mhd_ceiling_ratio=ceiling_rate / kr[0] if ceiling_rate else None)
    else:
        t.update(kernel_bone_matrices_per_s=None, ratio=None, met=None, note="kernel rate unavailable: " + why)
    targets.append(t)
    for label in ("full frame, JSON", "full frame, binary", "64 full frames, binary"):
        r = ratio(label)
        if r is not None:
            targets.append({"target": "(no target) %s: share of the mhd ceiling" % label, "ratio": r, "met": None})
    print()
    print("# targets (issue 4)")
    for t in targets:
        desc = "n/a" if t.get("ratio") is None else "%.0f%%" % (100 * t["ratio"])
        extra_s = ""
        if t.get("ratio_of_medians") is not None:
            desc += " (median of paired rounds; ratio of the medians %.0f%%)" % (100 * t["ratio_of_medians"])
        if "p99_ms" in t:
            extra_s = ", p99 %.3f ms" % t["p99_ms"]
        if "http_bone_matrices_per_s" in t:
            extra_s = ", %.3g bone matrices/s over HTTP" % t["http_bone_matrices_per_s"]
            extra_s += (", kernel %.3g/s (%s)" % (t["kernel_bone_matrices_per_s"], t["kernel_path"])
                        if t["kernel_bone_matrices_per_s"] else " (%s)" % t["note"])
            if t.get("mhd_ceiling_ratio") is not None:
                extra_s += "; the mhd ceiling itself, answering the same %d bytes, carries %.0f%% of the kernel rate" % (
                    by["batch of 64, binary"]["answer_bytes"], 100 * t["mhd_ceiling_ratio"])
        status = "n/a" if t["met"] is None else ("MET" if t["met"] else "MISSED")
        print("%-8s %s: %s%s" % (status, t["target"], desc, extra_s))

    # ---- gzip ----
    sd_cpu = by["single pose, JSON"]["skinnerd"].get("cpu_us_per_req")
    per_req_us = sd_cpu if sd_cpu else 1e6 / by["single pose, JSON"]["skinnerd"]["rps"]
    gz = []
    print()
    print("# would gzip pay? zlib with the gzip wrapper on one core, on full-frame answers (a rotation on every "
          "bone); skinnerd spends about %.1f us of CPU per single-pose JSON request" % per_req_us)
    for label in ("full frame, JSON", "full frame, binary", "64 full frames, JSON", "64 full frames, binary"):
        data = answers[label]
        for level in (1, 6):
            size, c_us, d_us = gzip_cost(data, level)
            saved = len(data) - size
            # Link speed below which sending the saved bytes takes longer than compressing them.
            breakeven_mbit = saved * 8 / c_us if c_us > 0 else float("inf")
            gz.append({"answer": label, "level": level, "bytes": len(data), "gzip_bytes": size,
                       "compress_us": round(c_us, 2), "decompress_us": round(d_us, 2),
                       "breakeven_mbit_s": round(breakeven_mbit, 1)})
            print("%-22s gzip -%d: %7d -> %7d bytes (%3.0f%%), compress %8.1f us, decompress %6.1f us; "
                  "pays only on links slower than %.0f Mbit/s" % (label, level, len(data), size,
                                                                  100.0 * size / len(data), c_us, d_us,
                                                                  breakeven_mbit))
    one = next(g for g in gz if g["answer"] == "full frame, JSON" and g["level"] == 1)
    gz_bin = next(g for g in gz if g["answer"] == "full frame, binary" and g["level"] == 1)
    verdict = ("gzip -1 of a full-frame JSON pose answer (%d -> %d bytes) costs %.0f us of server CPU, %.1fx what "
               "skinnerd spends on the whole request (%.1f us), so honouring Accept-Encoding: gzip would cut JSON "
               "throughput about %.1fx; it pays only on links slower than ~%.0f Mbit/s. The binary answer is %d "
               "bytes with no formatting at all (%s gzipped JSON; gzip -1 takes it to %d bytes for %.0f us): a "
               "client short of bandwidth should ask for application/octet-stream rather than gzip." % (
                   one["bytes"], one["gzip_bytes"], one["compress_us"], one["compress_us"] / per_req_us, per_req_us,
                   (one["compress_us"] + per_req_us) / per_req_us, one["breakeven_mbit_s"], gz_bin["bytes"],
                   "smaller than" if gz_bin["bytes"] < one["gzip_bytes"] else "%.1fx the size of" % (
                       gz_bin["bytes"] / one["gzip_bytes"]), gz_bin["gzip_bytes"], gz_bin["compress_us"]))
    print("# " + verdict)
    summary = {"bench": "http", "cpu": cpu, "cores": os.cpu_count(), "rounds": a.rounds,
               "wrk": "-t1 -c%d -d%ds" % (a.connections, max(1, a.duration // a.rounds)),
               "bones": BONES, "batch": BATCH, "rows": results, "mhd_first_call_single_binary": extra,
               "targets": targets, "gzip": gz, "gzip_verdict": verdict}
    print(json.dumps(summary, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
