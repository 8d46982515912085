#!/usr/bin/env python3
"""clients/python/skinnerd_client.py against the real daemon ($SKINNERD):
uploads of every format, poses, batches and ranges chunked under the
daemon's limits with the bytes of one whole request, binary decoding, the
slot <-> bone map, ops, typed errors, tokens, TLS, the 503 retry, and the
client README's example run as written. Every daemon listens on 127.0.0.1
on a port it picks and is stopped by the test that started it.

Prints `python_client: N passed, N failed`; exit 0 or 1."""
import http.server
import json
import os
import re
import shutil
import signal
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SKINNERD = os.environ.get("SKINNERD", os.path.join(TOP, "skinnerd"))
CLIENT_DIR = os.path.join(TOP, "clients", "python")
sys.path.insert(0, CLIENT_DIR)
import skinnerd_client as sk  # noqa: E402

FOX = os.path.join(TOP, "tests", "data", "Fox.glb")
SIMPLE_GLTF = os.path.join(TOP, "tests", "data", "SimpleSkin.gltf")
PAGE = os.path.join(TOP, "proto", "examples", "skeleton-babylon-page.json")
SERIALIZED = os.path.join(TOP, "proto", "examples", "skeleton-babylon-serialized.json")


class Daemon:
    def __init__(self, *args, scheme="http"):
        self.p = subprocess.Popen([SKINNERD, "--listen", "127.0.0.1:0", *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().strip()
        if not line:
            raise RuntimeError("skinnerd did not start: " + self.p.stderr.read())
        self.port = int(line.rsplit(":", 1)[1])
        self.url = "%s://127.0.0.1:%d" % (scheme, self.port)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            self.p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.communicate()


class ClientAgainstDaemon(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon("--max-frames", "50", "--max-batch", "8")
        cls.c = sk.Client(cls.d.url)
        cls.fox = cls.c.upload("fox", FOX)
        cls.big = Daemon()  # the default limits: one whole request for the reference bytes
        cls.bc = sk.Client(cls.big.url)
        cls.bc.upload("fox", FOX)

    @classmethod
    def tearDownClass(cls):
        cls.c.close()
        cls.bc.close()
        cls.d.stop()
        cls.big.stop()

    def raw(self, client, path, body, accept="application/json"):
        return client.request("POST", path, body, accept=accept)[2]

    def test_uploads_of_every_format_name_their_bones(self):
        self.assertEqual(self.fox.id, "fox")
        self.assertEqual(len(self.fox.order), 24)
        self.assertEqual(self.fox.animations(), ["Survey", "Walk", "Run"])
        with open(FOX, "rb") as f:
            self.assertEqual(self.c.upload("fox-bytes", f.read()).order, self.fox.order)
        simple = self.c.upload("simple", SIMPLE_GLTF)  # glTF JSON, recognised by its "asset"
        self.assertEqual(len(simple.order), 2)
        page = self.c.upload("page", PAGE)
        self.assertIn("armLeft", page.order)
        with open(SERIALIZED) as f:
            ser = self.c.upload("serialized", json.load(f))  # Babylon's Skeleton.serialize()
        self.assertEqual(ser.order, page.order)
        created = self.c.create(PAGE)
        self.assertRegex(created.id, r"^[0-9a-f]{16}$")
        self.assertEqual(self.c.create(PAGE).id, created.id)
        self.assertIn("page", [s["id"] for s in self.c.skeletons()])
        dry = self.c.upload("dry", FOX, dry_run=True)
        self.assertEqual(dry.order, self.fox.order)
        with self.assertRaises(sk.NotFound):
            self.c.skeleton("dry")
        self.c.delete("fox-bytes")
        with self.assertRaises(sk.NotFound) as e:
            self.c.skeleton("fox-bytes")
        self.assertEqual(e.exception.kind, "not-found")

    def test_slot_and_bone_map_both_ways(self):
        got = self.c.skeleton("fox")
        for name in self.fox.order:
            s = self.fox.slot_of(name)
            self.assertEqual(got.slot_of(name), s)
            if s is not None:
                self.assertEqual(self.fox.bone_of(s), name)
        self.assertEqual(self.fox.bone_count, 24)
        self.assertIsNone(self.fox.bone_of(24))  # the trailing identity
        with self.assertRaises(KeyError):
            self.fox.slot_of("no-such-bone")

    def test_a_pose_is_the_bytes_of_the_raw_request(self):
        body = {"bones": {"b_Head_05": {"rotation": [0, 0.6, 0]}}}
        raw = self.raw(self.c, "/v1/skeletons/fox/pose", body)
        self.assertEqual(self.c.pose("fox", body["bones"]), json.loads(raw))
        bin_raw = self.raw(self.c, "/v1/skeletons/fox/pose", body, sk.MAT4)
        f = self.c.pose("fox", body["bones"], format="mat4")
        self.assertEqual(f.data, bin_raw)
        self.assertEqual((f.pose_count, f.matrices, f.floats_per_matrix), (1, 25, 16))
        final = json.loads(raw)["final"]
        head = self.fox.slot_of("b_Head_05")
        want = struct.unpack("<16f", struct.pack("<16f", *final[16 * head:16 * head + 16]))
        self.assertEqual(tuple(f.matrix(0, head).tolist()), want)
        self.assertEqual(f.array().tolist(), list(f.floats().tolist()))

    def test_mat3x4_is_the_documented_transpose(self):
        m4 = self.c.pose("fox", animation="Walk", time=0.3, format="mat4")
        m3 = self.c.pose("fox", animation="Walk", time=0.3, format="mat3x4")
        self.assertEqual(m3.floats_per_matrix, 12)
        for slot in range(m4.matrices):
            a, b = m4.matrix(0, slot).tolist(), m3.matrix(0, slot).tolist()
            self.assertEqual(b, [a[4 * r + c] for c in range(3) for r in range(4)])

    def test_range_chunked_under_max_frames_is_one_whole_request(self):
        for fmt in ("mat4", "mat3x4", "json"):
            whole = self.bc.pose("fox", animation="Run", from_=0.1, to=4.2, fps=24, format=fmt)
            c = sk.Client(self.d.url)  # learns --max-frames 50 from the first 413
            got = c.range("fox", "Run", 0.1, 4.2, 24, format=fmt)
            self.assertEqual(c.max_frames, 8)  # a range is also a batch: --max-batch 8 is the smaller limit
            if fmt == "json":
                self.assertEqual(got, whole)
                self.assertEqual(len(got["results"]), sk.range_frame_count(0.1, 4.2, 24))
            else:
                self.assertEqual(got.data, whole.data)
                self.assertEqual(got.pose_count, 99)
            c.close()
        odd = sk.Client(self.big.url, max_frames=7)
        self.assertEqual(odd.range("fox", "Walk", 0, 1, 30, format="mat4", loop=True).data,
                         self.bc.pose("fox", animation="Walk", from_=0, to=1, fps=30, loop=True, format="mat4").data)

    def test_frames_by_index_are_the_single_poses_at_k_over_fps(self):
        got = self.c.frames("fox", "Walk", 30, 95, 160, format="mat4")
        self.assertEqual(got.pose_count, 65)
        for k in (95, 96, 127, 159):
            one = self.c.pose("fox", animation="Walk", time=k / 30, format="mat4")
            self.assertEqual(got.pose(k - 95).tobytes(), one.data)
        js = self.c.frames("fox", "Walk", 30, 3, 4)
        self.assertEqual(js["results"][0], self.c.pose("fox", animation="Walk", time=3 / 30))
        with self.assertRaises(ValueError):
            self.c.frames("fox", "Walk", 30, 5, 4)

    def test_batches_split_under_max_batch(self):
        poses = [{"animation": "Survey", "time": t / 10} for t in range(19)]
        got = self.c.poses("fox", poses)
        self.assertEqual(self.c.max_batch, 8)
        self.assertEqual(got, self.bc.poses("fox", poses))
        b = self.c.poses("fox", poses, format="mat4")
        self.assertEqual(b.data, self.bc.poses("fox", poses, format="mat4").data)
        self.assertEqual(b.pose_count, 19)

    def test_ops_ik_and_queries(self):
        r = self.c.pose("fox", animation="Walk", time=0.25, output=["final", "positions"],
                        ops=[sk.op("rotate", "b_Head_05", axis=[0, 1, 0], amount=0.5, space="world"),
                             sk.ik("b_LeftLeg02_016", [-7, 20, -40]),
                             sk.query("b_LeftFoot01_017", "absolutePosition")])
        self.assertEqual(r["queries"][0]["value"], [-6.999999523162842, 20, -40])
        self.assertEqual(len(r["positions"]), 3 * 24)
        b = self.c.pose("fox", animation="Walk", time=0.25, output=["final", "positions"], format="mat4",
                        ops=[sk.ik("b_LeftLeg02_016", [-7, 20, -40])])
        self.assertEqual(b.floats_per_pose, 25 * 16 + 3 * 24)
        self.assertEqual(tuple(b.pose(0)[25 * 16:].tolist()), struct.unpack(
            "<72f", struct.pack("<72f", *r["positions"])))
        self.c.upload("ops", PAGE)
        out = self.c.apply_ops("ops", [sk.op("setScale", "armLeft", scale=[2, 2, 2])])
        self.assertIsInstance(out, dict)
        self.assertEqual(sk.op("ik", "b", pole_target=[1, 2, 3]), {"op": "ik", "bone": "b", "poleTarget": [1, 2, 3]})

    def test_errors_are_typed_from_problem_json(self):
        with self.assertRaises(sk.Unprocessable) as e:
            self.c.pose("fox", {"b_Head_05": {"rotation": [0, "a", 0]}})
        self.assertEqual((e.exception.status, e.exception.kind, e.exception.pointer),
                         (422, "wrong-type", "/bones/b_Head_05/rotation/1"))
        with self.assertRaises(sk.NotFound) as e:
            self.c.pose("fox", {"nope": {"rotation": [0, 0, 0]}})
        self.assertEqual(e.exception.pointer, "/bones/nope")
        for fields, pointer, hint in (({"bones": {"b_Head_5": {"rotation": [0, 0, 0]}}}, "/bones/b_Head_5", "b_Head_05"),
                                      ({"bones": {"b_Head_05": {"rotaton": [0, 0, 0]}}}, "/bones/b_Head_05/rotaton",
                                       "rotation"),
                                      ({"animation": "walk", "time": 0}, "/animation", "Walk"),
                                      ({"animaton": "Walk", "time": 0}, "/animaton", "animation"),
                                      ({"ops": [{"op": "lookat", "bone": "b_Head_05", "target": [0, 0, 1]}]},
                                       "/ops/0/op", "lookAt")):
            with self.assertRaises(sk.SkinnerdError) as e:
                self.c.pose("fox", **fields)
            self.assertEqual(e.exception.pointer, pointer)
            self.assertTrue(e.exception.detail.endswith('; did you mean "%s"?' % hint), e.exception.detail)
        with self.assertRaises(sk.BadRequest) as e:
            self.c.request("POST", "/v1/skeletons/fox/pose", b'{"bones": ', content_type="application/json")
        self.assertEqual(e.exception.kind, "malformed-json")
        self.assertIsNotNone(e.exception.line)
        with self.assertRaises(sk.NotAcceptable):
            self.c.request("POST", "/v1/skeletons/fox/pose", {}, accept="text/html")
        with self.assertRaises(sk.UnsupportedMediaType):
            self.c.request("POST", "/v1/skeletons/fox/pose", b"{}", content_type="text/plain")
        with self.assertRaises(sk.MethodNotAllowed):
            self.c.request("GET", "/v1/skeletons/fox/pose")
        with self.assertRaises(sk.TooLarge) as e:
            self.c.pose("fox", animation="Run", from_=0, to=10, fps=30)
        self.assertEqual(e.exception.pointer, "/fps")
        self.assertIn("--max-frames", e.exception.detail)
        self.assertIsInstance(e.exception, sk.SkinnerdError)

    def test_one_client_shared_by_8_threads(self):
        want = self.c.pose("fox", animation="Walk", time=0.5, format="mat4").data
        got, errors = [], []

        def run():
            try:
                for _ in range(25):
                    got.append(self.c.pose("fox", animation="Walk", time=0.5, format="mat4").data)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
            finally:
                self.c.close()  # this thread's connection

        threads = [threading.Thread(target=run) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(got), 200)
        self.assertTrue(all(g == want for g in got))

    def test_a_connection_the_daemon_closed_while_idle_is_reopened(self):
        d = Daemon("--idle-timeout", "1")
        try:
            c = sk.Client(d.url)
            c.upload("page", PAGE)
            time.sleep(3)  # the daemon closes the kept-alive connection (--idle-timeout 1, swept each second)
            self.assertEqual(len(c.pose("page")["final"]), 64)
            c.close()
        finally:
            d.stop()

    def test_operational_routes(self):
        self.assertEqual(self.c.healthz(), {"status": "ok"})
        self.assertEqual(self.c.readyz(), {"status": "ready"})
        m = self.c.metrics()
        self.assertTrue(any(k.startswith("skinnerd_requests_total") for k in m))

    def test_numpy_when_present(self):
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("numpy is not installed (optional)")
        f = self.c.frames("fox", "Walk", 30, 0, 10, format="mat4")
        a = f.numpy()
        self.assertEqual(a.shape, (10, 25, 16))
        self.assertEqual(a[3, 2].tolist(), f.matrix(3, 2).tolist())


class Tokens(unittest.TestCase):
    def test_a_token_is_sent_and_scopes_are_typed(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokens")
            with open(path, "w") as f:
                f.write("reader-token-0123456789 read\nwriter-token-0123456789 write\n")
            daemon = Daemon("--tokens", path)
            try:
                with self.assertRaises(sk.Unauthorized):
                    sk.Client(daemon.url).skeletons()
                w = sk.Client(daemon.url, token="writer-token-0123456789")
                w.upload("page", PAGE)
                r = sk.Client(daemon.url, token="reader-token-0123456789")
                self.assertEqual(len(r.pose("page")["final"]), 16 * 4)
                with self.assertRaises(sk.Forbidden) as e:
                    r.upload("page2", PAGE)
                self.assertEqual(e.exception.kind, "forbidden")
            finally:
                daemon.stop()


class Tls(unittest.TestCase):
    def test_https_with_a_context_that_trusts_the_certificate(self):
        if shutil.which("openssl") is None:
            self.skipTest("no openssl CLI")
        with tempfile.TemporaryDirectory() as d:
            cert, key = os.path.join(d, "c.crt"), os.path.join(d, "c.key")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                            "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
                           check=True, capture_output=True)
            daemon = Daemon("--tls-cert", cert, "--tls-key", key, scheme="https")
            try:
                c = sk.Client(daemon.url, ssl_context=ssl.create_default_context(cafile=cert))
                c.upload("page", PAGE)
                self.assertEqual(len(c.pose("page", format="mat4").data), 4 * 16 * 4)
                with self.assertRaises(ssl.SSLError):
                    sk.Client(daemon.url).healthz()  # the system CAs do not know it
                c.close()
            finally:
                daemon.stop()


class RetryAfter(unittest.TestCase):
    """The daemon's 503s are hard to provoke on demand: a stub answers two
    503s with Retry-After, then the answer."""

    def test_503_with_retry_after_is_retried_then_given_up(self):
        hits = []

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                hits.append(self.path)
                if len(hits) in (1, 2) or self.path == "/always":
                    body = json.dumps({"type": "https://skinnerd.dev/problems/overloaded", "title": "overloaded",
                                       "status": 503, "detail": "busy", "pointer": ""}).encode()
                    self.send_response(503)
                    self.send_header("Content-Type", "application/problem+json")
                    self.send_header("Retry-After", "0")
                else:
                    body = b'{"status":"ok"}'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        t = threading.Thread(target=srv.serve_forever, daemon=True)
        t.start()
        try:
            c = sk.Client("http://127.0.0.1:%d" % srv.server_address[1], retries=2)
            self.assertEqual(c.healthz(), {"status": "ok"})
            self.assertEqual(len(hits), 3)
            with self.assertRaises(sk.Overloaded) as e:
                c.request("GET", "/always")
            self.assertEqual(e.exception.retry_after, 0)
            self.assertEqual(len(hits), 3 + 3)  # the first try and 2 retries
            c.close()
        finally:
            srv.shutdown()
            srv.server_close()


class ReadmeExample(unittest.TestCase):
    def test_the_readme_example_runs_as_written(self):
        text = open(os.path.join(CLIENT_DIR, "README.md")).read()
        code = re.findall(r"```python\n(.*?)```", text, re.S)[0]
        self.assertLessEqual(len(code.strip().split("\n")), 24)
        daemon = Daemon()
        try:
            env = dict(os.environ, PYTHONPATH=CLIENT_DIR)
            r = subprocess.run([sys.executable, "-c", code.replace("127.0.0.1:8080", "127.0.0.1:%d" % daemon.port)],
                               cwd=TOP, env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Frames(1801 poses x 25 matrices x 16 floats)", r.stdout)
            self.assertIn("422 wrong-type /bones/b_Head_05/rotation/1", r.stdout)
            self.assertIn("foot at [-6.999999523162842, 20, -40]", r.stdout)
        finally:
            daemon.stop()


def main():
    if not os.access(SKINNERD, os.X_OK):
        print("python_client: no skinnerd at %s" % SKINNERD)
        return 77
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(
        unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__]))
    bad = len(result.failures) + len(result.errors)
    print("python_client: %d passed, %d failed" % (result.testsRun - bad - len(result.skipped), bad))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
