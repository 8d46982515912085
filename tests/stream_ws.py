#!/usr/bin/env python3
"""GET /v1/skeletons/{id}/stream (proto/stream.md) against a real daemon,
with a minimal RFC 6455 client written here (stdlib only): the handshake
and its refusals, 10 000 frames with the same bytes as /pose, errors as
problem messages, ping/pong, mat3x4, slow readers that must not slow
/healthz nor grow the process past its budget, the Server-Sent Events
fallback (bytes, Last-Event-ID, refusals, readers that stop), and close
1001 on shutdown. Every daemon listens on 127.0.0.1 and is stopped here."""
import base64, hashlib, http.client, json, os, random, select, shutil, signal, socket, ssl, struct, subprocess, sys, \
    tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import Checks

SKINNERD = os.environ.get("SKINNERD", "./skinnerd")
C = Checks("stream_ws")


class Daemon:
    def __init__(self, *args):
        self.p = subprocess.Popen([SKINNERD, "--listen", "127.0.0.1:0", *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline().strip().rsplit(":", 1)[1])
        self.c = None

    def req(self, method, path, body=None, accept=None, headers=None):
        if self.c is None:
            self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = dict(headers or {})
        if body is not None:
            h.setdefault("Content-Type", "application/json")
            body = json.dumps(body) if not isinstance(body, (bytes, str)) else body
        if accept:
            h["Accept"] = accept
        try:
            self.c.request(method, path, body=body, headers=h)
            r = self.c.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # a kept connection left idle past --idle-timeout (a long phase on
            # a loaded machine) is closed by the server: open a new one once
            self.c.close()
            self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.c.request(method, path, body=body, headers=h)
            r = self.c.getresponse()
        data = r.read()
        return r.status, data, r

    def stop(self):
        if self.c:
            self.c.close()
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.err = self.p.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.err = self.p.communicate()[1]
        return self.p.returncode


class WS:
    """A WebSocket client: masked frames out, whole messages in."""

    def __init__(self, port, path, key=None, extra=None, small=False, tls=None):
        self.s = socket.socket()
        if small:  # a slow reader's buffers: the kernel's, not the test's, stay small
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
        self.s.settimeout(30)
        self.s.connect(("127.0.0.1", port))
        if tls is not None:
            self.s = tls.wrap_socket(self.s, server_hostname="localhost")
        self.key = key or base64.b64encode(os.urandom(16)).decode()
        hdr = {"Host": "127.0.0.1", "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": self.key,
               "Sec-WebSocket-Version": "13", **(extra or {})}
        self.s.sendall(("GET %s HTTP/1.1\r\n" % path + "".join("%s: %s\r\n" % kv for kv in hdr.items() if kv[1] is not None)
                        + "\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                break
            self.buf += d
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        self.headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
        if self.status != 101:  # the problem body, by Content-Length
            n = int(self.headers.get("content-length", "0"))
            while len(self.buf) < n:
                d = self.s.recv(65536)
                if not d:
                    break
                self.buf += d
            self.body = self.buf[:n]

    def accept_ok(self):
        want = base64.b64encode(hashlib.sha1((self.key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        return self.headers.get("sec-websocket-accept") == want.decode()

    def frame(self, op, payload, fin=True):
        mask = os.urandom(4)
        n = len(payload)
        h = bytes([(0x80 if fin else 0) | op])
        if n < 126:
            h += bytes([0x80 | n])
        elif n < 65536:
            h += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            h += bytes([0x80 | 127]) + struct.pack(">Q", n)
        m = bytes(b ^ mask[i & 3] for i, b in enumerate(payload)) if n < 4096 else \
            (int.from_bytes(payload, "little") ^ int.from_bytes(mask * ((n + 3) // 4), "little")).to_bytes(
                (n + 3) // 4 * 4, "little")[:n]
        return h + mask + m

    def send(self, obj, op=1):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.s.sendall(self.frame(op, data))

    def _need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError
            self.buf += d

    def recv(self):
        """(opcode, payload) of the next message; control frames too."""
        msg, mop = b"", None
        while True:
            self._need(2)
            b0, b1 = self.buf[0], self.buf[1]
            n, at = b1 & 0x7F, 2
            if n == 126:
                self._need(4)
                n, at = struct.unpack(">H", self.buf[2:4])[0], 4
            elif n == 127:
                self._need(10)
                n, at = struct.unpack(">Q", self.buf[2:10])[0], 10
            self._need(at + n)
            p, self.buf = self.buf[at:at + n], self.buf[at + n:]
            op = b0 & 0x0F
            if op >= 8:
                return op, p
            msg += p
            mop = op if op else mop
            if b0 & 0x80:
                return mop, msg

    def close(self):
        self.s.close()


def split(answer):
    off, frame, n, mats = struct.unpack("<IIII", answer[:16])
    return answer[16:off].rstrip(b"\0").decode(), frame, n, mats, answer[off:]


def skeleton(n, seed):
    rnd = random.Random(seed)
    bones = [{"name": f"b{i}", "parent": None if i == 0 else f"b{rnd.randrange(i)}",
              "position": [rnd.uniform(-1, 1) for _ in range(3)], "rotation": [rnd.uniform(-3, 3) for _ in range(3)],
              "scaling": [rnd.uniform(0.5, 1.5) for _ in range(3)]} for i in range(n)]
    return {"bones": bones}


def pose(rnd, nb):
    return {"bones": {f"b{rnd.randrange(nb)}": {"rotationQuaternion": [rnd.uniform(-1, 1) for _ in range(4)]},
                      f"b{rnd.randrange(nb)}": {"position": [rnd.uniform(-2, 2) for _ in range(3)]}}}


def handshake(d):
    w = WS(d.port, "/v1/skeletons/s1/stream")
    C.check("101 Switching Protocols", w.status == 101)
    C.check("Sec-WebSocket-Accept is SHA-1 of the key and the GUID", w.accept_ok())
    w.close()
    w = WS(d.port, "/v1/skeletons/s1/stream", extra={"Upgrade": None, "Connection": None})
    C.check("a plain GET is 426", w.status == 426 and b"WebSocket" in w.body)
    w.close()
    w = WS(d.port, "/v1/skeletons/s1/stream", extra={"Sec-WebSocket-Version": "8"})
    C.check("version 8 is 426 naming 13", w.status == 426 and w.headers.get("sec-websocket-version") == "13")
    w.close()
    w = WS(d.port, "/v1/skeletons/s1/stream", key="short")
    C.check("a bad key is 400", w.status == 400 and b"Sec-WebSocket-Key" in w.body)
    w.close()
    w = WS(d.port, "/v1/skeletons/nope/stream")
    C.check("an unknown skeleton is 404", w.status == 404)
    w.close()
    w = WS(d.port, "/v1/skeletons/s1/stream?format=f64")
    C.check("an unknown format is 400", w.status == 400 and b"format" in w.body)
    w.close()


def same_bytes(d, nb, frames):
    rnd = random.Random(7)
    poses = [pose(rnd, nb) for _ in range(frames)]
    w = WS(d.port, "/v1/skeletons/s1/stream")
    got, batch, t0 = [], 250, time.time()
    for i in range(0, frames, batch):
        w.s.sendall(b"".join(w.frame(1, json.dumps({**p, "id": i + k}).encode())
                             for k, p in enumerate(poses[i:i + batch])))
        for _ in poses[i:i + batch]:
            got.append(w.recv())
    t1 = time.time()
    bad = 0
    for i, (op, msg) in enumerate(got):
        ident, frame, n, mats, body = split(msg)
        st, want, _ = d.req("POST", "/v1/skeletons/s1/pose", poses[i], accept="application/octet-stream")
        if op != 2 or ident != str(i) or frame != i or n != 1 or mats != nb + 1 or body != want or st != 200:
            bad += 1
    C.check("%d frames over the stream have /pose's bytes (%d differ)" % (frames, bad), bad == 0 and len(got) == frames)
    print("stream: %d frames in %.2f s (%.0f frames/s)" % (frames, t1 - t0, frames / max(t1 - t0, 1e-9)))
    # mat3x4, ops and a frame range: the same bytes as /pose with the same Accept
    w3 = WS(d.port, "/v1/skeletons/s1/stream?format=mat3x4")
    w3.send({**poses[0], "id": "m"})
    op, msg = w3.recv()
    ident, frame, n, mats, body = split(msg)
    st, want, _ = d.req("POST", "/v1/skeletons/s1/pose", poses[0], accept="application/x-skinner-mat3x4")
    C.check("mat3x4 has /pose's bytes", ident == '"m"' and body == want and len(body) == (nb + 1) * 48)
    w3.close()
    # errors are problem messages and the session goes on
    w.send({"bones": {"nope": {"position": [0, 0, 0]}}, "id": 5})
    op, msg = w.recv()
    j = json.loads(msg)
    st, want, _ = d.req("POST", "/v1/skeletons/s1/pose", {"bones": {"nope": {"position": [0, 0, 0]}}})
    C.check("an unknown bone is /pose's problem in a message with the id",
            op == 1 and j["id"] == 5 and j["problem"] == json.loads(want) and j["problem"]["status"] == st)
    w.send(b"{not json")
    op, msg = w.recv()
    C.check("bad JSON is a 400 problem message", op == 1 and json.loads(msg)["problem"]["status"] == 400)
    w.s.sendall(w.frame(9, b"hi"))
    op, msg = w.recv()
    C.check("ping is answered with pong", op == 10 and msg == b"hi")
    w.send(poses[1])
    op, msg = w.recv()
    C.check("the session goes on after errors", op == 2 and split(msg)[1] == frames)
    w.s.sendall(w.frame(8, struct.pack(">H", 1000)))
    op, msg = w.recv()
    C.check("a close is echoed", op == 8 and struct.unpack(">H", msg[:2])[0] == 1000)
    w.close()


def playback(d):
    with open(os.path.join(os.environ.get("SK_TEST_DATA", "tests"), "data", "Fox.glb"), "rb") as f:
        st, _, _ = d.req("PUT", "/v1/skeletons/fox", f.read(), headers={"Content-Type": "model/gltf-binary"})
    C.check("Fox stored", st in (200, 201))
    w = WS(d.port, "/v1/skeletons/fox/stream", small=True)
    w.send({"play": {"animation": "Walk", "fps": 500, "frames": [10, 610]}, "id": "p"})
    time.sleep(1.0)  # not reading: the clip pauses at the backpressure mark, nothing is skipped
    frames, bad, text = [], 0, None
    while True:
        op, msg = w.recv()
        if op == 1:
            text = json.loads(msg)
            break
        frames.append(split(msg))
    C.check("playback ends with {id, played}", text == {"id": "p", "played": 610})
    C.check("every frame 10..609 comes once, in order", [f[1] for f in frames] == list(range(10, 610)))
    for ident, k, n, mats, body in frames[::20]:
        st, want, _ = d.req("POST", "/v1/skeletons/fox/pose", {"animation": "Walk", "fps": 500, "frames": [k, k + 1]},
                            accept="application/octet-stream")
        bad += ident != '"p"' or body != want or n != 1
    C.check("played frames have /pose's bytes (%d differ)" % bad, bad == 0)
    w.send({"play": {"animation": "Nope", "fps": 30, "frames": [0, 5]}, "id": 1})
    op, msg = w.recv()
    C.check("an unknown clip is a problem message", op == 1 and json.loads(msg)["problem"]["status"] in (404, 422))
    w.send({"play": {"animation": "Walk", "fps": 0, "frames": [0, 5]}})
    op, msg = w.recv()
    C.check("fps 0 is a problem naming /play/fps", op == 1 and json.loads(msg)["problem"]["pointer"] == "/play/fps")
    w.send({"play": {"animation": "Walk", "fps": 30, "frames": [0, 5], "speed": 0}})
    op, msg = w.recv()
    C.check("speed 0 is a problem naming /play/speed", op == 1 and json.loads(msg)["problem"]["pointer"] == "/play/speed")
    # the page's edits ride along: ops (and loop) copied into every frame's /pose request
    ops = [{"op": "rotate", "bone": "b_Head_05", "axis": [0, 1, 0], "amount": 0.7}]
    t0 = time.monotonic()
    w.send({"play": {"animation": "Walk", "fps": 5, "frames": [3, 13], "speed": 10, "loop": True, "ops": ops}, "id": "q"})
    frames = []
    while True:
        op, msg = w.recv()
        if op == 1:
            text = json.loads(msg)
            break
        frames.append(split(msg))
    dt = time.monotonic() - t0
    C.check("speed 10 pushes 5 fps frames 10 times as often (10 frames in %.2f s, 2 s at speed 1)" % dt,
            dt < 1.5 and text == {"id": "q", "played": 13} and [f[1] for f in frames] == list(range(3, 13)))
    bad = 0
    for ident, k, n, mats, body in frames:
        st, want, _ = d.req("POST", "/v1/skeletons/fox/pose",
                            {"animation": "Walk", "fps": 5, "frames": [k, k + 1], "loop": True, "ops": ops},
                            accept="application/octet-stream")
        bad += body != want
    st, plain, _ = d.req("POST", "/v1/skeletons/fox/pose", {"animation": "Walk", "fps": 5, "frames": [12, 13]},
                         accept="application/octet-stream")
    C.check("played frames with ops have /pose's bytes with those ops (%d differ)" % bad,
            bad == 0 and frames[-1][4] != plain)
    w.send({"play": {"animation": "Walk", "fps": 5, "frames": [0, 3], "ops": [{"op": "rotate", "bone": "nope"}]}, "id": 2})
    op, msg = w.recv()
    C.check("a bad op ends the playback with its problem", op == 1 and json.loads(msg)["problem"]["pointer"].startswith("/ops/0"))
    w.close()


def sse_events(port, path, headers=None, limit=None):
    """The events of an event stream (a list of dicts: id, event, data), its status and content type."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", path, headers={"Accept": "text/event-stream", **(headers or {})})
    r = c.getresponse()
    if r.status != 200:
        body = r.read()
        c.close()
        return r.status, r.getheader("Content-Type"), json.loads(body)
    events, ev = [], {}
    for line in r:
        line = line.decode().rstrip("\n")
        if line == "":
            events.append(ev)
            ev = {}
            if limit and len(events) >= limit:
                break
            continue
        k, _, v = line.partition(": ")
        ev[k] = v
    c.close()
    return r.status, r.getheader("Content-Type"), events


def sse(d):
    """The event-stream fallback: a playback as Server-Sent Events, /pose's bytes in base64."""
    q = "/v1/skeletons/fox/stream?animation=Walk&fps=30&frames=5,305&speed=16"  # paced: 0.6 s
    st, ct, evs = sse_events(d.port, q)
    frames = [e for e in evs if "id" in e]
    C.check("an event stream answers text/event-stream (%s %s)" % (st, ct), st == 200 and ct == "text/event-stream")
    C.check("one event per frame 5..304, id = frame index, then end", [int(e["id"]) for e in frames] == list(range(5, 305))
            and evs[-1] == {"event": "end", "data": '{"played":305}'})
    bad = 0
    for e in frames:
        k = int(e["id"])
        _, want, _ = d.req("POST", "/v1/skeletons/fox/pose", {"animation": "Walk", "fps": 30, "frames": [k, k + 1]},
                           accept="application/octet-stream")
        bad += base64.b64decode(e["data"]) != want
    C.check("every event is /pose's bytes in base64 (%d differ)" % bad, bad == 0)
    st, _, evs = sse_events(d.port, q + "&format=mat3x4", headers={"Last-Event-ID": "300"})
    _, want, _ = d.req("POST", "/v1/skeletons/fox/pose", {"animation": "Walk", "fps": 30, "frames": [301, 302]},
                       accept="application/x-skinner-mat3x4")
    C.check("Last-Event-ID: 300 resumes at 301 (mat3x4)", [e.get("id") for e in evs] == ["301", "302", "303", "304", None]
            and base64.b64decode(evs[0]["data"]) == want)
    for path, hdr, status, says in [
            (q.replace("Walk", "Nope"), {}, 404, 'no animation named \"Nope\"'),
            (q.replace("5,305", "5"), {}, 422, "?frames= is START,END"),
            (q.replace("fps=30", "fps=0"), {}, 422, "?fps= is a number in (0, 1000]"),
            ("/v1/skeletons/fox/stream?fps=30&frames=0,3", {}, 422, "?animation=CLIP&fps=F&frames=START,END"),
            (q, {"Last-Event-ID": "305"}, 400, "Last-Event-ID is the index of a frame sent, in [5, 305)"),
            (q + "&format=f16", {}, 400, "?format= is f32")]:
        st, ct, p = sse_events(d.port, path, headers=hdr)
        C.check("event stream refused %d: %s (%s)" % (status, says, p.get("detail") if isinstance(p, dict) else p),
                st == status and ct == "application/problem+json" and says in p["detail"])
    # A reader that stops reading a long playback holds one event, not the clip.
    rss0 = rss_kb(d.p.pid)
    socks = []
    for _ in range(50):
        s = socket.create_connection(("127.0.0.1", d.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"GET /v1/skeletons/fox/stream?animation=Walk&fps=1000&frames=0,10000000 HTTP/1.1\r\n"
                  b"Host: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        socks.append(s)
    time.sleep(1.0)
    ms = healthz_ms(d.port)
    rss = rss_kb(d.p.pid)
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    c.request("GET", "/metrics")
    metrics = c.getresponse().read().decode()
    c.close()
    for s in socks:
        s.close()
    said = "50 event streams nobody reads: /healthz p50 %.2f ms max %.2f ms, RSS %d -> %d kB" % (ms[0], ms[1], rss0, rss)
    print(said)
    # The slow readers' measure (p50, as below), plus a bound on the worst
    # probe that a stalled loop would break: one probe of 20 took 181 ms in
    # CI's make -j2 check beside another suite, 0.45-21 ms on its own.
    C.check(said + " (latency)", ms[0] < 50 and ms[1] < 1000)
    used = [l for l in metrics.splitlines() if l.startswith("skinnerd_memory_used_bytes ")]
    limit = [l for l in metrics.splitlines() if l.startswith("skinnerd_memory_budget_bytes ")]
    if used and limit:
        C.check("the budget holds with 50 unread event streams (%s / %s)" % (used[0].split()[-1], limit[0].split()[-1]),
                float(used[0].split()[-1]) <= float(limit[0].split()[-1]))
    if sanitized(d.p.pid):
        # As the slow readers below: ASan's shadow memory and quarantine are
        # not ours to bound (RSS grew by ~220 MB there); the budget check holds.
        print("  (RSS growth not checked: ASan's shadow memory and quarantine)")
    else:
        C.check(said + " (RSS grows under 64 MB)", rss - rss0 < 64 * 1024)


def healthz_ms(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    worst = []
    for _ in range(20):
        t = time.time()
        c.request("GET", "/healthz")
        c.getresponse().read()
        worst.append((time.time() - t) * 1000)
    c.close()
    worst.sort()
    return worst[len(worst) // 2], worst[-1]


def sanitized(pid):
    """True when the daemon runs under AddressSanitizer (libasan mapped, or its runtime linked in)."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            if "libasan" in f.read():
                return True
        with open("/proc/%d/exe" % pid, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def slow_readers(d, nb, count):
    rnd = random.Random(3)
    msg = None
    socks = []
    for i in range(count):
        w = WS(d.port, "/v1/skeletons/s1/stream", small=True)
        if w.status != 101:
            break
        w.s.setblocking(False)
        socks.append(w)
    C.check("%d sessions open" % count, len(socks) == count)
    frame = WS.frame(None, 1, json.dumps(pose(rnd, nb)).encode())
    # each reader sends requests and reads nothing until the server stops reading them
    deadline = time.time() + 20
    pending = {id(w): w for w in socks}
    sent = 0
    while pending and time.time() < deadline:
        _, wr, _ = select.select([], list(w.s for w in pending.values()), [], 0.5)
        if not wr:  # none can take more for 0.5 s: the server stopped reading
            pending.clear()
            break
        for w in list(pending.values()):
            if w.s in wr:
                try:
                    sent += w.s.send(frame * 64)
                except BlockingIOError:
                    del pending[id(w)]
    # the requests already in the sockets are evaluated first (a burst of
    # ~200 x 25 poses, on a shared machine): then the readers only hold
    burst = healthz_ms(d.port)
    settle = time.time()
    while time.time() - settle < 15 and healthz_ms(d.port)[0] > 5:
        time.sleep(0.2)
    settled = time.time() - settle
    p50, worst = healthz_ms(d.port)
    d.c.close()
    d.c = None  # idle past --idle-timeout meanwhile
    st, metrics, _ = d.req("GET", "/metrics")
    rss = rss_kb(d.p.pid)
    print("slow readers: %d sessions, %.1f MB of requests sent; /healthz during the burst p50 %.1f ms max %.1f ms, "
          "settled after %.1f s, then p50 %.2f ms max %.2f ms; RSS %d kB" % (
              len(socks), sent / 1e6, burst[0], burst[1], settled, p50, worst, rss))
    C.check("the server stopped reading (backpressure)", not pending)
    C.check("/healthz p50 under 50 ms with slow readers (%.1f ms)" % p50, p50 < 50)
    used = [l for l in metrics.decode().splitlines() if l.startswith("skinnerd_memory_used_bytes ")]
    limit = [l for l in metrics.decode().splitlines() if l.startswith("skinnerd_memory_budget_bytes ")]
    if used and limit:
        C.check("the budget holds (%s / %s)" % (used[0].split()[-1], limit[0].split()[-1]),
                float(used[0].split()[-1]) <= float(limit[0].split()[-1]))
    if sanitized(d.p.pid):
        # As tests/sk_httpc.h's sk_daemon_sanitized: ASan's shadow memory and
        # quarantine are not ours to bound; the budget check above holds.
        print("  (RSS %d kB not checked against 300 MB: ASan's shadow memory and quarantine)" % rss)
    else:
        C.check("RSS stays under 300 MB with %d slow readers (%d kB)" % (len(socks), rss), rss < 300 * 1024)
    for w in socks:
        w.close()


def per_ip(d):
    ws = [WS(d.port, "/v1/skeletons/s1/stream") for _ in range(3)]
    C.check("3 sessions open under --max-per-ip 3", all(w.status == 101 for w in ws))
    try:
        w = WS(d.port, "/v1/skeletons/s1/stream")
        refused = w.status != 101
        w.close()
    except (OSError, IndexError):
        refused = True
    C.check("sessions count in --max-per-ip: a 4th connection is refused", refused)
    for w in ws:
        w.close()
    time.sleep(0.3)


def over_tls(nb):
    if shutil.which("openssl") is None:
        print("# no openssl: wss:// not checked")
        return
    tmp = tempfile.mkdtemp()
    key, cert = os.path.join(tmp, "k.pem"), os.path.join(tmp, "c.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=localhost"], check=True, capture_output=True)
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    d = Daemon("--tls-cert", cert, "--tls-key", key)
    try:
        c = http.client.HTTPSConnection("127.0.0.1", d.port, context=ctx, timeout=30)
        c.request("PUT", "/v1/skeletons/s1", json.dumps(skeleton(nb, 1)), {"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        C.check("skeleton stored over TLS", r.status in (200, 201))
        rnd = random.Random(11)
        w = WS(d.port, "/v1/skeletons/s1/stream", tls=ctx)
        C.check("wss:// upgrades", w.status == 101 and w.accept_ok())
        bad = 0
        for i in range(200):
            p = pose(rnd, nb)
            w.send({**p, "id": i})
            op, msg = w.recv()
            c.request("POST", "/v1/skeletons/s1/pose", json.dumps(p),
                      {"Content-Type": "application/json", "Accept": "application/octet-stream"})
            want = c.getresponse().read()
            bad += op != 2 or split(msg)[4] != want
        C.check("200 frames over wss:// have /pose's bytes (%d differ)" % bad, bad == 0)
        w.close()
        c.close()
    finally:
        C.check("the TLS daemon stops cleanly", d.stop() == 0)
        shutil.rmtree(tmp)


def tokens():
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "tokens")
    with open(path, "w") as f:
        f.write("reader-token-0123456789 read\n")
    os.chmod(path, 0o600)
    d = Daemon("--tokens", path)
    try:
        w = WS(d.port, "/v1/skeletons/s1/stream")
        C.check("a session without a token is 401", w.status == 401)
        w.close()
        w = WS(d.port, "/v1/skeletons/s1/stream", extra={"Authorization": "Bearer reader-token-0123456789"})
        C.check("a read token reaches the route (404: no skeleton s1 here)", w.status == 404)
        w.close()
    finally:
        d.stop()
        shutil.rmtree(tmp)


def shutdown(d):
    w = WS(d.port, "/v1/skeletons/s1/stream")
    w.send(pose(random.Random(1), 4))
    w.recv()
    # an event stream being read: it ends with a 503 problem event naming where to resume
    with open(os.path.join(os.environ.get("SK_TEST_DATA", "tests"), "data", "Fox.glb"), "rb") as f:
        d.req("PUT", "/v1/skeletons/fox", f.read(), headers={"Content-Type": "model/gltf-binary"})
    d.c.close()
    d.c = None
    es = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    es.request("GET", "/v1/skeletons/fox/stream?animation=Walk&fps=30&frames=0,10000000",
               headers={"Accept": "text/event-stream"})
    er = es.getresponse()
    er.readline()
    d.p.send_signal(signal.SIGTERM)
    try:
        op, msg = w.recv()
        C.check("shutdown sends close 1001", op == 8 and struct.unpack(">H", msg[:2])[0] == 1001)
    except (EOFError, OSError) as e:
        C.check("shutdown sends close 1001 (%s)" % e, False)
    w.close()
    tail = er.read().decode().split("\n\n")
    last = [e for e in tail if e.strip()][-1] if any(e.strip() for e in tail) else ""
    C.check("shutdown ends an event stream with a 503 problem event (%s)" % last[:160],
            last.startswith("event: problem\ndata: ") and '"status":503' in last and "reconnect with Last-Event-ID" in last)
    es.close()
    t = time.time()
    try:
        d.p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    print("exit %.2f s after SIGTERM" % (time.time() - t))
    C.check("the daemon stops within 2 s of its sessions' close", time.time() - t < 2)
    rc = d.stop()
    if rc != 0:
        print(d.err[-2000:])
    C.check("the daemon exits 0 with a session open (%s)" % rc, rc == 0)


def main():
    frames = int(os.environ.get("SK_STREAM_FRAMES", "10000"))
    nb = 40
    d = Daemon("--max-per-ip", "0")
    try:
        st, _, _ = d.req("PUT", "/v1/skeletons/s1", skeleton(nb, 1))
        C.check("skeleton stored", st in (200, 201))
        handshake(d)
        same_bytes(d, nb, frames)
        playback(d)
        sse(d)
        slow_readers(d, nb, int(os.environ.get("SK_STREAM_READERS", "200")))
    finally:
        d.stop()
    over_tls(nb)
    tokens()
    d = Daemon("--max-per-ip", "3")
    d.req("PUT", "/v1/skeletons/s1", skeleton(4, 2))
    d.c.close()
    d.c = None
    per_ip(d)
    shutdown(d)
    return C.summary()


if __name__ == "__main__":
    sys.exit(main())
