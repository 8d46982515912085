#!/usr/bin/env python3
"""skinnerd run for real: persistence across kill -9, damaged records,
eviction with reload, glTF over HTTP, systemd notify, watchdog and socket
activation. Every daemon listens on 127.0.0.1 and is stopped by the check
that started it."""
import http.client, json, os, random, shutil, signal, socket, struct, subprocess, sys, tempfile, threading, time

SKINNERD = os.environ.get("SKINNERD", "./skinnerd")
SKINNER = os.environ.get("SKINNER", "./skinner")
DATA = os.environ.get("SK_TEST_DATA", "tests")
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {name} {detail}")


class Daemon:
    def __init__(self, *args, env=None, pass_fds=(), wrap=None):
        cmd = [SKINNERD, "--listen", "127.0.0.1:0", *args]
        if wrap:
            cmd = wrap(cmd)
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, **(env or {})}, pass_fds=pass_fds)
        line = self.p.stdout.readline()
        if "inherited" in line:
            self.port = int(line.rsplit(" ", 1)[1])
        else:
            self.port = int(line.strip().rsplit(":", 1)[1])

    def req(self, method, path, body=None, ctype="application/json", accept=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        h = {}
        if body is not None:
            h["Content-Type"] = ctype
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
        if accept:
            h["Accept"] = accept
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def stop(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            out, err = self.p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        self.stderr = err
        return self.p.returncode


def skeleton(n, seed):
    rnd = random.Random(seed)
    bones = []
    for i in range(n):
        bones.append({"name": f"b{i}", "parent": None if i == 0 else f"b{rnd.randrange(i)}",
                      "position": [rnd.uniform(-1, 1) for _ in range(3)],
                      "rotation": [rnd.uniform(-3, 3) for _ in range(3)],
                      "scaling": [rnd.uniform(0.5, 1.5) for _ in range(3)]})
    return {"bones": bones}


POSE = {"bones": {"b1": {"rotationQuaternion": [0.1, 0.2, 0.3, 0.9]}}, "output": ["final", "absolute", "local"]}


def answers(d, ids):
    return {i: (d.req("POST", f"/v1/skeletons/{i}/pose", POSE), d.req("GET", f"/v1/skeletons/{i}")) for i in ids}


def test_persistence(tmp):
    data_dir = os.path.join(tmp, "data")
    d = Daemon("--data-dir", data_dir)
    try:
        ids = [f"sk{i}" for i in range(8)]
        for k, i in enumerate(ids):
            st, _ = d.req("PUT", f"/v1/skeletons/{i}", skeleton(5 + k, k))
            check("PUT with --data-dir", st == 201, st)
        st, _ = d.req("PATCH", "/v1/skeletons/sk3/bones", {"bones": {"b2": {"position": [1, 2, 3]}, "b1": {"scaling": [2, 1, 1]}}})
        check("PATCH with --data-dir", st == 200, st)
        st, _ = d.req("POST", "/v1/skeletons/sk4/rest", {"bones": ["b1"]})
        check("rest with --data-dir", st == 200, st)
        st, _ = d.req("DELETE", "/v1/skeletons/sk7")
        check("DELETE with --data-dir", st == 204, st)
        with open(os.path.join(DATA, "data", "Fox.glb"), "rb") as f:
            fox = f.read()
        st, _ = d.req("PUT", "/v1/skeletons/fox", fox, ctype="model/gltf-binary")
        check("PUT a GLB", st == 201, st)
        st, body = d.req("GET", "/v1/skeletons/fox")
        first_bone = json.loads(body)["order"][1]
        st, _ = d.req("PATCH", "/v1/skeletons/fox/bones", {"bones": {first_bone: {"scaling": [1.5, 1, 1]}}})
        check("PATCH a glTF skeleton", st == 200, st)
        before = answers(d, ids[:7] + ["fox"])
        walk_before = d.req("POST", "/v1/skeletons/fox/pose", {"animation": "Walk", "time": 0.3})
        check("a clip pose", walk_before[0] == 200, walk_before)
    finally:
        d.stop(signal.SIGKILL)
    d = Daemon("--data-dir", data_dir)
    try:
        after = answers(d, ids[:7] + ["fox"])
        for i in before:
            check(f"{i} answers the same after kill -9", before[i] == after[i])
        check("deleted stays deleted", d.req("GET", "/v1/skeletons/sk7")[0] == 404)
        check("clips survive a restart", d.req("POST", "/v1/skeletons/fox/pose", {"animation": "Walk", "time": 0.3}) == walk_before)
        st, body = d.req("GET", "/v1/skeletons")
        check("list after restart", st == 200 and len(json.loads(body)["skeletons"]) == 8, body[:200])
    finally:
        d.stop()
    # A damaged record is skipped with a log line; the rest load.
    with open(os.path.join(data_dir, "sk0.rec"), "r+b") as f:
        f.truncate(40)
    with open(os.path.join(data_dir, "sk1.rec"), "r+b") as f:
        f.seek(30)
        f.write(b"\xff\xfe")
    d = Daemon("--data-dir", data_dir)
    try:
        check("damaged records are gone", d.req("GET", "/v1/skeletons/sk0")[0] == 404 and d.req("GET", "/v1/skeletons/sk1")[0] == 404)
        check("intact records load", d.req("GET", "/v1/skeletons/sk2")[0] == 200)
    finally:
        d.stop()
    check("a damaged record is logged", "sk0.rec" in d.stderr and "sk1.rec" in d.stderr, d.stderr[-300:])


def test_crash_stream(tmp):
    """kill -9 in the middle of a stream of uploads and PATCHes: every
    acknowledged skeleton is there afterwards, answering the same."""
    data_dir = os.path.join(tmp, "crash")
    d = Daemon("--data-dir", data_dir)
    acked = {}
    rnd = random.Random(7)
    stop = threading.Event()

    def killer():
        time.sleep(rnd.uniform(0.4, 1.0))
        d.p.send_signal(signal.SIGKILL)
        stop.set()

    threading.Thread(target=killer).start()
    k = 0
    while not stop.is_set():
        sid = f"c{k % 40}"
        try:
            if sid in acked and rnd.random() < 0.5:
                st, _ = d.req("PATCH", f"/v1/skeletons/{sid}/bones", {"bones": {"b1": {"position": [k, 0, 0]}}})
            else:
                st, _ = d.req("PUT", f"/v1/skeletons/{sid}", skeleton(6, k))
            if st in (200, 201):
                acked[sid] = d.req("POST", f"/v1/skeletons/{sid}/pose", POSE)
        except (ConnectionError, OSError, http.client.HTTPException):
            # This request may have landed without its answer reaching us:
            # its skeleton's state is unknown, so it is not checked.
            acked.pop(sid, None)
            break
        k += 1
    d.stop(signal.SIGKILL)
    d = Daemon("--data-dir", data_dir)
    try:
        # Only what we saw acknowledged (and then read back) is checked.
        same = sum(1 for sid, ans in acked.items() if d.req("POST", f"/v1/skeletons/{sid}/pose", POSE) == ans)
        check(f"all {len(acked)} acknowledged skeletons survive kill -9", same == len(acked) and len(acked) > 0,
              f"{same}/{len(acked)}")
    finally:
        d.stop()


def test_eviction_reload(tmp):
    data_dir = os.path.join(tmp, "evict")
    d = Daemon("--data-dir", data_dir, "--cache-mb", "1")
    try:
        for k in range(12):
            d.req("PUT", f"/v1/skeletons/e{k}", skeleton(300, k))
        st, m = d.req("GET", "/metrics")
        ev = [l for l in m.decode().splitlines() if l.startswith("skinnerd_cache_evictions_total")]
        check("the cache evicts past --cache-mb", ev and float(ev[0].split()[-1]) > 0, ev)
        st, body = d.req("GET", "/v1/skeletons")
        check("evicted skeletons stay listed", len(json.loads(body)["skeletons"]) == 12, body[:100])
        st, a = d.req("POST", "/v1/skeletons/e0/pose", POSE)
        check("an evicted skeleton reloads on demand", st == 200, st)
    finally:
        d.stop()
    d = Daemon("--data-dir", data_dir)
    try:
        check("reload equals a fresh start", d.req("POST", "/v1/skeletons/e0/pose", POSE) == (200, a))
    finally:
        d.stop()


def test_gltf_http(tmp):
    d = Daemon()
    try:
        with open(os.path.join(DATA, "data", "Fox.glb"), "rb") as f:
            fox = f.read()
        st, body = d.req("POST", "/v1/skeletons", fox, ctype="model/gltf-binary")
        check("POST a GLB", st == 201, body[:200])
        sid = json.loads(body)["id"]
        st, body = d.req("GET", f"/v1/skeletons/{sid}")
        clips = json.loads(body).get("animations", [])
        check("GET lists the clips", [c["name"] for c in clips] == ["Survey", "Walk", "Run"], clips)
        want = json.loads(subprocess.run([SKINNER, "eval", os.path.join(DATA, "data", "case-fox-walk.json")],
                                         capture_output=True, text=True, check=True).stdout, parse_int=float)
        st, body = d.req("POST", f"/v1/skeletons/{sid}/pose", {"animation": "Walk", "time": 0.3})
        check("a clip pose equals skinner eval", st == 200 and json.loads(body) == want["results"][0], body[:200])
        st, body = d.req("POST", f"/v1/skeletons/{sid}/pose", {"animation": "Run", "from": 0, "to": 0.1, "fps": 30})
        res = json.loads(body, parse_int=float).get("results", []) if st == 200 else []
        bits = lambda a: struct.pack(f"<{len(a)}f", *a)  # noqa: E731 (float32 bits, -0 kept)
        ok = len(res) == 4 and all(bits(g["final"]) == bits(w["final"]) for g, w in zip(res, want["results"][1:]))
        check("a frame range answers one result per frame, skinner eval's bit for bit", ok, body[:200])
        st, body = d.req("POST", f"/v1/skeletons/{sid}/poses", {"poses": [{"animation": "Walk", "time": 0.3},
                                                                          {"animation": "Run", "times": [0, 0.5]}]})
        check("frame ranges flatten inside a batch", st == 200 and len(json.loads(body)["results"]) == 3, body[:200])
        st, body = d.req("POST", f"/v1/skeletons/{sid}/pose", {"animation": "Fly", "time": 0})
        check("an unknown clip is a 404 naming the field", st == 404 and json.loads(body)["pointer"] == "/animation", body)
        st, body = d.req("PUT", "/v1/skeletons/bad", fox[:5000], ctype="model/gltf-binary")
        check("a truncated GLB is a 4xx problem+json", 400 <= st < 500 and b"pointer" in body, (st, body[:200]))
        st, body = d.req("PUT", "/v1/skeletons/x", fox, ctype="model/gltf-binary; foo=bar")
        check("media type parameters are fine", st == 201, st)
        st, body = d.req("PUT", "/v1/skeletons/y?skin=7", fox, ctype="model/gltf-binary")
        check("an unknown ?skin is a 404", st == 404, st)
        st, body = d.req("POST", f"/v1/skeletons/{sid}/pose", {"output": ["final", "local"]},
                         accept="application/octet-stream")
        check("binary answers refuse local/absolute outputs at /output", st == 422 and json.loads(body)["pointer"] == "/output",
              (st, body[:200]))
        st, body = d.req("PUT", "/v1/skeletons/z", b"abc", ctype="image/png")
        check("other media types are 415", st == 415, st)
    finally:
        d.stop()


def test_threaded_batch(tmp):
    """A batch large enough to be split across the pool threads answers the
    same bytes as the same batch evaluated in one piece on the loop."""
    rnd = random.Random(3)
    sk = skeleton(300, 11)
    batch = {"poses": [{"bones": {f"b{rnd.randrange(1, 300)}": {"rotationQuaternion": [rnd.uniform(-1, 1) for _ in range(4)]}}}
                       for _ in range(1024)]}
    got = []
    for args in (("--inline-limit", "0", "--threads", "2"), ("--inline-limit", "100000000", "--threads", "1")):
        d = Daemon(*args)
        try:
            d.req("PUT", "/v1/skeletons/big", sk)
            got.append(d.req("POST", "/v1/skeletons/big/poses", batch, accept="application/octet-stream"))
        finally:
            d.stop()
    check("a split batch answers the same bytes as an unsplit one",
          got[0][0] == 200 and got[0] == got[1] and len(got[0][1]) == 1024 * 301 * 64, (got[0][0], len(got[0][1])))


def test_slow_clients_are_cut(tmp):
    """More slow clients than connection slots: headers or bodies that
    trickle in past their deadline are cut, so a normal client gets in."""
    d = Daemon("--max-connections", "40", "--header-timeout", "1", "--body-timeout", "2")
    socks = []
    try:
        for i in range(60):
            c = socket.create_connection(("127.0.0.1", d.port), timeout=5)
            if i % 2:
                c.sendall(b"POST /v1/skeletons/x/pose HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            else:
                c.sendall(b"POST /v1/skeletons/x/pose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 1000\r\n\r\n{")
            socks.append(c)
        stop = threading.Event()

        def trickle():
            while not stop.is_set():
                for c in socks:
                    try:
                        c.send(b"a")
                    except OSError:
                        pass
                time.sleep(0.3)

        t = threading.Thread(target=trickle)
        t.start()
        time.sleep(0.3)
        t0 = time.time()
        try:
            st, _ = d.req("GET", "/healthz")
        except Exception as e:  # noqa: BLE001 - reported as the failure
            st = repr(e)
        waited = time.time() - t0
        stop.set()
        t.join()
        check("a normal client gets in past 60 trickling clients", st == 200 and waited < 6, (st, waited))
        closed = 0
        for c in socks:
            c.settimeout(0.5)
            try:
                closed += c.recv(1) == b""
            except (socket.timeout, OSError):
                closed += isinstance(sys.exc_info()[1], ConnectionResetError)
        check("trickling clients are cut at their deadlines", closed >= 50, closed)
    finally:
        for c in socks:
            c.close()
        d.stop()


def test_systemd(tmp):
    path = os.path.join(tmp, "notify.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(5)
    d = Daemon(env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"})
    try:
        msgs = []
        deadline = time.time() + 3
        while time.time() < deadline and not (any("READY=1" in m for m in msgs) and any("WATCHDOG=1" in m for m in msgs)):
            msgs.append(s.recv(4096).decode())
        check("READY=1 once listening", any("READY=1" in m for m in msgs), msgs)
        check("WATCHDOG=1 pings at half WatchdogSec", any("WATCHDOG=1" in m for m in msgs), msgs)
    finally:
        rc = d.stop()
    msgs = []
    try:
        while True:
            m = s.recv(4096).decode()
            msgs.append(m)
            if "STOPPING=1" in m:
                break
    except socket.timeout:
        pass
    check("STOPPING=1 on SIGTERM, exit 0", any("STOPPING=1" in m for m in msgs) and rc == 0, (msgs, rc))
    s.close()
    # Socket activation: the daemon serves a socket it inherited as fd 3.
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    port = ls.getsockname()[1]
    fd = ls.fileno()
    wrap = lambda cmd: ["sh", "-c", f'exec 3<&{fd}; LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"', "sh", *cmd]
    d = Daemon(pass_fds=(fd,), wrap=wrap)
    ls.close()
    try:
        check("socket activation serves the inherited socket", d.port == port and d.req("GET", "/healthz")[0] == 200,
              (d.port, port))
    finally:
        d.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="skinnerd_ops.")
    try:
        for t in (test_persistence, test_crash_stream, test_eviction_reload, test_gltf_http, test_threaded_batch, test_slow_clients_are_cut, test_systemd):
            try:
                t(tmp)
            except Exception as e:  # a crashed check is a failed check, not a silent one
                check(t.__name__, False, repr(e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"skinnerd_ops: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
