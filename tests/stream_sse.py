#!/usr/bin/env python3
"""The event-stream playback (proto/stream.md, "Server-Sent Events") against
a real daemon: frames paced at fps x speed (event k arrives k / (fps x
speed) s after the first, within a bound), a waiting stream neither busy
nor cut although its frames are further apart than --stall-timeout, slow
readers that get every frame in order while /healthz and the budget hold,
streams nobody reads that cost no CPU once their socket buffers (kept
small) are full, a reader that stops is cut after --stall-timeout (and
counted), and a waiting stream that ends at once with its 503 problem
event on shutdown.
Every daemon listens on 127.0.0.1 and is stopped here."""
import http.client, json, os, signal, socket, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import Checks

SKINNERD = os.environ.get("SKINNERD", "./skinnerd")
C = Checks("stream_sse")
# Arrival bounds: the loop's timer is to the millisecond, the rest is this
# machine's scheduling (2 cores shared with make -j2 check; p90 20.9 ms
# seen there): 9 frames in 10 within BOUND_MS, every one within WORST_MS
# (a late frame past 100 ms restarts the schedule, so later frames would
# all fail the first bound). An unpaced stream misses both by far.
BOUND_MS = 30
WORST_MS = 250


class Daemon:
    def __init__(self, *args):
        self.p = subprocess.Popen([SKINNERD, "--listen", "127.0.0.1:0", *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline().strip().rsplit(":", 1)[1])

    def req(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def metric(self, name):
        _, text = self.req("GET", "/metrics")
        for line in text.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.err = self.p.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.err = self.p.communicate()[1]
        return self.p.returncode


def timed_events(port, path):
    """(status, [(seconds since the request, event dict)]) of an event stream read to its end."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    t0 = time.monotonic()
    c.request("GET", path, headers={"Accept": "text/event-stream"})
    r = c.getresponse()
    if r.status != 200:
        body = r.read()
        c.close()
        return r.status, json.loads(body)
    out, ev = [], {}
    for line in r:
        line = line.decode().rstrip("\n")
        if line == "":
            out.append((time.monotonic() - t0, ev))
            ev = {}
            continue
        k, _, v = line.partition(": ")
        ev[k] = v
    c.close()
    return 200, out


def paced(d, fps, speed, start, end):
    q = "/v1/skeletons/fox/stream?animation=Walk&fps=%g&frames=%d,%d" % (fps, start, end)
    if speed != 1:
        q += "&speed=%g" % speed
    st, evs = timed_events(d.port, q)
    if st != 200:
        C.check("fps %g speed %g: 200 (%s %s)" % (fps, speed, st, evs), False)
        return
    frames = [(t, int(e["id"])) for t, e in evs if "id" in e]
    rate = fps * speed
    # The schedule's origin as the median offset of all frames, not frame
    # 0's arrival alone (which the 200's headers and the first read delay).
    off = sorted(t - (k - start) / rate for t, k in frames)
    origin = off[len(off) // 2] if off else 0
    t0 = frames[0][0] if frames else 0
    dev = [abs((t - origin) - (k - start) / rate) * 1000 for t, k in frames]
    dev.sort()
    span = frames[-1][0] - t0 if frames else 0
    said = "fps %g speed %g: %d frames over %.3f s (%.3f s due), |arrival - origin - (k - %d) / %g| median %.1f ms, " \
           "p90 %.1f ms, max %.1f ms" % (fps, speed, len(frames), span, (end - 1 - start) / rate, start, rate,
                                        dev[len(dev) // 2] if dev else -1, dev[len(dev) * 9 // 10] if dev else -1,
                                        dev[-1] if dev else -1)
    print(said)
    C.check(said + ": every frame once, in order, then end",
            st == 200 and [k for _, k in frames] == list(range(start, end)) and evs[-1][1].get("event") == "end")
    due = (end - 1 - start) / rate
    C.check(said + ": not faster than the pace (frame 0 may come late by up to %d ms)" % BOUND_MS,
            span >= due - BOUND_MS / 1000)
    if rate <= 200:
        C.check(said + ": 90%% within %d ms of k / rate, all within %d ms" % (BOUND_MS, WORST_MS),
                dev and dev[len(dev) * 9 // 10] < BOUND_MS and dev[-1] < WORST_MS)
    else:
        # at 1 ms a frame, one hiccup of the shared machine past 100 ms
        # restarts the schedule: the span is what is held
        C.check(said + ": within 300 ms of the pace", span < due + 0.3)


def refusals(d):
    base = "/v1/skeletons/fox/stream?animation=Walk&frames=0,10"
    for q, says in [("&fps=30&speed=0", "?speed= is a number in (0, 16]"),
                    ("&fps=30&speed=17", "?speed= is a number in (0, 16]"),
                    ("&fps=30&speed=x", "?speed= is a number in (0, 16]"),
                    ("&fps=500&speed=4", "at most 1000 frames a second")]:
        st, p = timed_events(d.port, base + q)
        C.check("event stream refused %s: %s (%s)" % (q, says, p.get("detail") if isinstance(p, dict) else p),
                st == 422 and says in p.get("detail", ""))


def healthz_p50(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    ms = []
    for _ in range(20):
        t = time.monotonic()
        c.request("GET", "/healthz")
        c.getresponse().read()
        ms.append((time.monotonic() - t) * 1000)
    c.close()
    ms.sort()
    return ms[len(ms) // 2]


def open_raw(port, path, rcvbuf=4096):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n" % path).encode())
    return s


def ids_in(data):
    return [int(l[4:]) for l in data.split(b"\n") if l.startswith(b"id: ")]


def slow_readers(d, count):
    """Readers that take a few KB every 50 ms from a 1000 fps playback: every frame in order, nothing piled up."""
    socks = [open_raw(d.port, "/v1/skeletons/fox/stream?animation=Walk&fps=1000&frames=0,10000000")
             for _ in range(count)]
    got = [b""] * count
    t_end = time.monotonic() + 2.0
    while time.monotonic() < t_end:
        for i, s in enumerate(socks):
            s.settimeout(0.5)
            try:
                got[i] += s.recv(4096)
            except socket.timeout:
                pass
        time.sleep(0.05)
    p50 = healthz_p50(d.port)
    used, limit = d.metric("skinnerd_memory_used_bytes"), d.metric("skinnerd_memory_budget_bytes")
    for s in socks:
        s.close()
    ok = all(ids_in(g) == list(range(len(ids_in(g)))) and len(ids_in(g)) > 0 for g in got)
    n = [len(ids_in(g)) for g in got]
    said = "%d slow readers of a 1000 fps playback: %d..%d frames each in 2 s, /healthz p50 %.2f ms, budget %s / %s" % (
        count, min(n), max(n), p50, used, limit)
    print(said)
    C.check(said + ": each got frames 0, 1, 2... in order (none skipped)", ok)
    C.check(said + ": /healthz p50 under 50 ms", p50 < 50)
    if used is not None and limit:
        C.check(said + ": the budget holds", used <= limit)


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")


def unread(d, count):
    """Streams nobody reads cost nothing once their small socket buffers are full (no kernel
    autotuning up to 4 MiB each, written one frame at a time), and /healthz stays fast."""
    socks = [open_raw(d.port, "/v1/skeletons/fox/stream?animation=Walk&fps=1000&frames=0,10000000")
             for _ in range(count)]
    time.sleep(1.5)
    c0, t0 = cpu_s(d.p.pid), time.monotonic()
    time.sleep(2)
    share = (cpu_s(d.p.pid) - c0) / (time.monotonic() - t0)
    p50 = healthz_p50(d.port)
    for s in socks:
        s.close()
    said = "%d streams nobody reads, settled: the daemon uses %.1f%% of a core, /healthz p50 %.2f ms" % (
        count, share * 100, p50)
    print(said)
    C.check(said + " (under 5%: nothing is written)", share < 0.05)
    C.check(said + " (/healthz under 50 ms)", p50 < 50)
    st, evs = None, None
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    c.request("GET", "/v1/skeletons/fox/stream?animation=Walk&fps=100&frames=0,1", headers={"Accept": "text/event-stream"})
    r = c.getresponse()
    r.read()
    C.check("an event stream closes its connection at its end (Connection: %s)" % r.getheader("Connection"),
            r.getheader("Connection") == "close")
    c.close()


def stalled(d):
    """A reader that stops is cut after --stall-timeout (1 s here); one that keeps up with a slow clip is not."""
    before = d.metric('skinnerd_connections_closed_total{reason="stalled_reader"}') or 0
    s = open_raw(d.port, "/v1/skeletons/fox/stream?animation=Walk&fps=1000&frames=0,10000000")
    t0 = time.monotonic()
    cut = None
    while time.monotonic() - t0 < 15:
        if (d.metric('skinnerd_connections_closed_total{reason="stalled_reader"}') or 0) > before:
            cut = time.monotonic() - t0
            break
        time.sleep(0.1)
    # its unread bytes drain at a few tens of KB/s through a 4 KB window:
    # the daemon's count of open connections says it closed its end
    conns = d.metric("skinnerd_connections")
    s.close()
    said = "a reader that stops is cut %s s after it opened (--stall-timeout 1)" % ("%.2f" % cut if cut else "never")
    print(said)
    C.check(said, cut is not None and cut < 10)
    C.check("its connection is closed by then (%s open: the /metrics one)" % conns, conns == 1)
    # frames 0.8 s apart... at fps 0.8, 1.25 s apart: longer than --stall-timeout, never cut
    st, evs = timed_events(d.port, "/v1/skeletons/fox/stream?animation=Walk&fps=0.8&frames=0,3")
    C.check("a stream waiting 1.25 s between frames (> --stall-timeout 1) is not cut (%s)" % [e for _, e in evs][-1:],
            st == 200 and [e.get("id") for _, e in evs] == ["0", "1", "2", None] and evs[-1][1].get("event") == "end")


def shutdown(d):
    """A stream waiting for its next frame ends at once on SIGTERM with its 503 problem event."""
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    c.request("GET", "/v1/skeletons/fox/stream?animation=Walk&fps=0.1&frames=0,100",
              headers={"Accept": "text/event-stream"})
    r = c.getresponse()
    r.readline()
    r.readline()
    r.readline()  # event 0; event 1 is due in 10 s
    t = time.monotonic()
    d.p.send_signal(signal.SIGTERM)
    tail = r.read().decode()
    dt = time.monotonic() - t
    c.close()
    C.check("SIGTERM ends a waiting stream with a 503 problem event in %.2f s (%s)" % (dt, tail[:120]),
            dt < 2 and tail.startswith("event: problem\ndata: ") and '"status":503' in tail
            and "Last-Event-ID: 0" in tail)
    try:
        d.p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    dt = time.monotonic() - t
    C.check("the daemon stops within 2 s of SIGTERM (%.2f s)" % dt, dt < 2)
    rc = d.stop()
    if rc != 0:
        print(d.err[-2000:])
    C.check("the daemon exits 0 (%s)" % rc, rc == 0)


def main():
    d = Daemon("--max-per-ip", "0", "--stall-timeout", "1", "--memory-mb", "64")
    try:
        with open(os.path.join(os.environ.get("SK_TEST_DATA", "tests"), "data", "Fox.glb"), "rb") as f:
            st, _ = d.req("PUT", "/v1/skeletons/fox", f.read(), headers={"Content-Type": "model/gltf-binary"})
        C.check("Fox stored", st in (200, 201))
        paced(d, 40, 1, 0, 41)
        paced(d, 30, 4, 7, 68)
        paced(d, 1000, 1, 0, 500)
        refusals(d)
        slow_readers(d, int(os.environ.get("SK_SSE_READERS", "20")))
        unread(d, int(os.environ.get("SK_SSE_UNREAD", "50")))
        stalled(d)
        shutdown(d)
    finally:
        d.stop()
    return C.summary()


if __name__ == "__main__":
    sys.exit(main())
