#!/usr/bin/env python3
"""The proto/ contract against the running daemon.

1. proto/openapi.yaml loads, is OpenAPI 3.1, and every $ref in it resolves
   (plus openapi-spec-validator's full check when that module is installed);
2. every proto/schemas/*.json is a valid JSON Schema 2020-12;
3. every request in proto/examples/examples.json validates against its
   schema (or, for the 422 examples the schema itself can catch, does not);
4. starts skinnerd ($SKINNERD, default ./skinnerd) on 127.0.0.1, port 0,
   sends every example in order and checks status, headers, media type, the
   answer against its schema (problem+json for errors), expected bodies
   (numbers within the conformance tolerance) and binary float32 answers;
   stops the daemon.

Prints `proto_examples: N passed, N failed`; exit 0, 1 on failure, or 77
(automake SKIP) when the schema part passes and there is no daemon to run.
Needs python3-jsonschema and python3-yaml (Debian packages).
"""

import json
import os
import re
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(os.path.dirname(HERE), "proto")
SCHEMAS = os.path.join(PROTO, "schemas")
EXAMPLES = os.path.join(PROTO, "examples")
BASE_URI = "https://skinnerd.example/schemas/"

passed = 0
failed = 0


def ok(what):
    global passed
    passed += 1
    print("ok - %s" % what)


def fail(what, why):
    global failed
    failed += 1
    print("FAIL - %s: %s" % (what, why))


# ---- schemas -----------------------------------------------------------------

def load_schemas():
    schemas = {}
    for fn in sorted(os.listdir(SCHEMAS)):
        if fn.endswith(".json"):
            with open(os.path.join(SCHEMAS, fn)) as f:
                schemas[fn] = json.load(f)
    return schemas


def make_validator_factory(schemas):
    """Returns validator(name) for schema file `name`, resolving cross-file
    $refs locally with both old (RefResolver) and new (referencing) jsonschema."""
    cls = jsonschema.Draft202012Validator
    try:
        from referencing import Registry, Resource  # jsonschema >= 4.18
        from referencing.jsonschema import DRAFT202012
        registry = Registry().with_resources(
            (BASE_URI + fn, Resource.from_contents(s, default_specification=DRAFT202012)) for fn, s in schemas.items())

        def make(name):
            return cls(schemas[name], registry=registry, format_checker=cls.FORMAT_CHECKER)
    except ImportError:  # Debian 12: jsonschema 4.10
        store = {BASE_URI + fn: s for fn, s in schemas.items()}

        def make(name):
            resolver = jsonschema.RefResolver(BASE_URI + name, schemas[name], store=store)
            return cls(schemas[name], resolver=resolver, format_checker=cls.FORMAT_CHECKER)
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = make(name)
        return cache[name]
    return get


def first_error(validator, instance):
    errs = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if not errs:
        return None
    e = errs[0]
    return "%s at /%s" % (e.message[:300], "/".join(str(p) for p in e.absolute_path))


def resolve_pointer(doc, ptr):
    for part in [p for p in ptr.split("/") if p != ""]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(doc, list):
            doc = doc[int(part)]
        else:
            doc = doc[part]
    return doc


def check_openapi(schemas):
    path = os.path.join(PROTO, "openapi.yaml")
    try:
        with open(path) as f:
            api = yaml.safe_load(f)
    except Exception as e:  # noqa: BLE001 - report any load error
        fail("openapi.yaml loads", e)
        return
    if not str(api.get("openapi", "")).startswith("3.1"):
        fail("openapi.yaml is OpenAPI 3.1", "openapi: %r" % api.get("openapi"))
    else:
        ok("openapi.yaml loads (OpenAPI %s, %d paths)" % (api["openapi"], len(api.get("paths", {}))))
    bad = []

    def walk(node, where):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                target, _, frag = ref.partition("#")
                try:
                    if target == "":
                        resolve_pointer(api, frag)
                    else:
                        fn = os.path.basename(target)
                        if not target.startswith("schemas/") or fn not in schemas:
                            raise KeyError(target)
                        resolve_pointer(schemas[fn], frag)
                except (KeyError, IndexError, ValueError, TypeError):
                    bad.append("%s -> %s" % (where, ref))
            for k, v in node.items():
                walk(v, where + "/" + str(k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, where + "/" + str(i))
    walk(api, "")
    if bad:
        fail("openapi.yaml $refs resolve", "; ".join(bad[:5]))
    else:
        ok("every $ref in openapi.yaml resolves")
    # Every operation answers something, and every error answer is problem+json.
    problems = []
    for p, item in api.get("paths", {}).items():
        for method, op in item.items():
            if method == "parameters":
                continue
            resp = op.get("responses") or {}
            if not resp:
                problems.append("%s %s has no responses" % (method.upper(), p))
            for code, r in resp.items():
                if "$ref" in r:
                    r = resolve_pointer(api, r["$ref"].partition("#")[2])
                probe = p == "/readyz" and str(code) == "503"  # a readiness answer, not an error
                if str(code).startswith(("4", "5")) and not probe and \
                        "application/problem+json" not in (r.get("content") or {}):
                    problems.append("%s %s %s is not problem+json" % (method.upper(), p, code))
    if problems:
        fail("openapi.yaml operations", "; ".join(problems[:5]))
    else:
        ok("every operation has responses; every error response is application/problem+json (but /readyz 503)")
    try:
        from openapi_spec_validator import validate as osv_validate  # optional, not in Debian 12
    except ImportError:
        try:
            from openapi_spec_validator import validate_spec as osv_validate
        except ImportError:
            print("# openapi-spec-validator not installed: full OpenAPI validation skipped")
            return
    try:
        osv_validate(api, base_uri="file://" + path) if "base_uri" in osv_validate.__code__.co_varnames \
            else osv_validate(api, spec_url="file://" + path)
        ok("openapi-spec-validator accepts openapi.yaml")
    except Exception as e:  # noqa: BLE001
        fail("openapi-spec-validator", str(e)[:500])


# ---- example bodies -------------------------------------------------------------

def example_body(ex):
    """(bytes or None, JSON value or None) of an example's request."""
    if "body" in ex:
        return json.dumps(ex["body"]).encode(), ex["body"]
    if "body_file" in ex:
        with open(os.path.join(EXAMPLES, ex["body_file"]), "rb") as f:
            raw = f.read()
        return raw, json.loads(raw)
    if "body_text" in ex:
        return ex["body_text"].encode(), None
    g = ex.get("body_generate")
    if g is None:
        return None, None
    if g["kind"] == "empty_poses":
        v = {"poses": [{} for _ in range(g["count"])]}
    elif g["kind"] == "chain":
        v = {"bones": [{"name": "b%d" % i, "parent": ("b%d" % (i - 1)) if i else None, "position": [0, 1, 0]}
                       for i in range(g["bones"])]}
    elif g["kind"] == "padded":
        raw = b'{"bones": [{"name": "root"}]}'
        return raw + b" " * (g["bytes"] - len(raw)), None
    else:
        raise ValueError("unknown body_generate kind %r" % g["kind"])
    return json.dumps(v).encode(), v


def check_example_requests(examples, validator):
    for ex in examples:
        if "request_schema" not in ex:
            continue
        what = "request of %s is %svalid against %s" % (
            ex["name"], "" if ex.get("request_schema_valid", True) else "in", ex["request_schema"])
        _, value = example_body(ex)
        err = first_error(validator(ex["request_schema"]), value)
        if ex.get("request_schema_valid", True):
            fail(what, err) if err else ok(what)
        else:
            fail(what, "the schema accepts it") if err is None else ok(what)


# ---- HTTP ---------------------------------------------------------------------------

class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name):
        return self.headers.get(name.lower())


def http(port, method, path, headers=None, body=None, timeout=30):
    """One request on its own connection (Connection: close); tolerates the
    server answering and closing before the whole body is sent (413)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1:%d" % port, "Connection: close"]
        for k, v in (headers or {}).items():
            lines.append("%s: %s" % (k, v))
        if body is not None:
            lines.append("Content-Length: %d" % len(body))
        req = ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")
        try:
            s.sendall(req)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        raise IOError("no complete HTTP answer (%d bytes)" % len(data))
    hl = head.decode("iso-8859-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", hl[0])
    if not m:
        raise IOError("bad status line %r" % hl[0])
    hdrs = {}
    for line in hl[1:]:
        k, _, v = line.partition(":")
        k = k.strip().lower()
        hdrs[k] = (hdrs[k] + ", " + v.strip()) if k in hdrs else v.strip()
    if "chunked" in hdrs.get("transfer-encoding", "").lower():
        out = b""
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out += rest[:size]
            rest = rest[size + 2:]
        rest = out
    elif "content-length" in hdrs:
        rest = rest[:int(hdrs["content-length"])]
    return Response(int(m.group(1)), hdrs, rest)


# ---- comparisons ------------------------------------------------------------------------

def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def compare(actual, expected, where=""):
    """None if equal (numbers in 16-number matrices within 1e-5 x max(1,
    largest |entry| of that expected matrix), as tests/oracle/compare.mjs)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return "%s: expected an object" % (where or "/")
        if set(actual) != set(expected):
            return "%s: keys %s, expected %s" % (where or "/", sorted(actual), sorted(expected))
        for k in expected:
            d = compare(actual[k], expected[k], where + "/" + k)
            if d:
                return d
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return "%s: expected an array of %d" % (where or "/", len(expected))
        if expected and all(is_num(x) for x in expected) and len(expected) % 16 == 0:
            if not all(is_num(x) for x in actual):
                return "%s: expected numbers" % where
            for m in range(0, len(expected), 16):
                tol = 1e-5 * max(1.0, max(abs(x) for x in expected[m:m + 16]))
                for i in range(m, m + 16):
                    if abs(actual[i] - expected[i]) > tol:
                        return "%s/%d: %r, expected %r" % (where, i, actual[i], expected[i])
            return None
        for i, (a, e) in enumerate(zip(actual, expected)):
            d = compare(a, e, "%s/%d" % (where, i))
            if d:
                return d
        return None
    if is_num(expected) and is_num(actual):
        return None if abs(actual - expected) <= 1e-5 * max(1.0, abs(expected)) else \
            "%s: %r, expected %r" % (where, actual, expected)
    return None if actual == expected else "%s: %r, expected %r" % (where or "/", actual, expected)


def mat3x4(m):
    """The first three rows of Babylon/glTF-ordered m as a shader's mat3x4 reads them."""
    return [m[0], m[4], m[8], m[12], m[1], m[5], m[9], m[13], m[2], m[6], m[10], m[14]]


def check_binary(res, spec):
    per = 16 if spec["layout"] == "mat4" else 12
    want = 4 * per * spec["matrices"] * spec["poses"]
    if len(res.body) != want:
        return "binary body of %d bytes, expected %d" % (len(res.body), want)
    got = struct.unpack("<%df" % (want // 4), res.body)
    k = 0
    for p, final in enumerate(spec["finals"]):
        for mi in range(spec["matrices"]):
            m = final[16 * mi:16 * mi + 16]
            exp = m if per == 16 else mat3x4(m)
            tol = 1e-5 * max(1.0, max(abs(x) for x in m))
            for i, e in enumerate(exp):
                if abs(got[k] - e) > tol:
                    return "pose %d matrix %d float %d: %r, expected %r" % (p, mi, i, got[k], e)
                k += 1
    return None


def media_type(res):
    return (res.header("content-type") or "").split(";")[0].strip().lower()


def run_example(port, ex, validator, seen):
    raw, _ = example_body(ex)
    headers = dict(ex.get("headers") or {})
    res = http(port, ex["method"], ex["path"], headers, raw)
    why = []
    if res.status != ex["status"]:
        why.append("status %d, expected %d (body: %s)" % (res.status, ex["status"], res.body[:300]))
    js = None
    ctype = media_type(res)
    if res.status >= 400:
        if ctype != "application/problem+json":
            why.append("error answer is %r, not application/problem+json" % ctype)
        try:
            js = json.loads(res.body)
            err = first_error(validator("problem.json"), js)
            if err:
                why.append("problem+json: " + err)
            elif js["status"] != res.status:
                why.append("problem status %r in a %d answer" % (js["status"], res.status))
        except ValueError as e:
            why.append("problem body is not JSON: %s" % e)
    elif ex.get("response_schema"):
        if ctype != "application/json":
            why.append("answer is %r, not application/json" % ctype)
        try:
            js = json.loads(res.body)
            err = first_error(validator(ex["response_schema"]), js)
            if err:
                why.append("%s: %s" % (ex["response_schema"], err))
        except ValueError as e:
            why.append("answer is not JSON: %s" % e)
    if ex.get("response_content_type") and ctype != ex["response_content_type"]:
        why.append("Content-Type %r, expected %r" % (ctype, ex["response_content_type"]))
    if res.status == 204 and res.body:
        why.append("204 with a body")
    for h, v in (ex.get("response_headers") or {}).items():
        got = res.header(h)
        if got is None:
            why.append("no %s header" % h)
        elif v is not True and got != v:
            why.append("%s: %r, expected %r" % (h, got, v))
    if res.status == ex["status"]:
        if "response_body" in ex and js is not None:
            d = compare(js, ex["response_body"])
            if d:
                why.append("body differs at " + d)
        if "response_binary" in ex:
            d = check_binary(res, ex["response_binary"])
            if d:
                why.append(d)
        if js is not None and res.status >= 400:
            if "expect_pointer" in ex and js.get("pointer") != ex["expect_pointer"]:
                why.append("pointer %r, expected %r" % (js.get("pointer"), ex["expect_pointer"]))
            if "expect_pointer_prefix" in ex and not str(js.get("pointer", "")).startswith(ex["expect_pointer_prefix"]):
                why.append("pointer %r, expected it under %r" % (js.get("pointer"), ex["expect_pointer_prefix"]))
            if ex.get("expect_line_column") and not ("line" in js and "column" in js):
                why.append("no line/column in a malformed-JSON problem")
        if "same_id_as" in ex and js is not None:
            other = seen.get(ex["same_id_as"])
            if other is None or other.get("id") != js.get("id"):
                why.append("id %r, expected the same id as %s (%r)" % (js.get("id"), ex["same_id_as"],
                                                                       other and other.get("id")))
        if ex["method"] == "POST" and ex["path"] == "/v1/skeletons" and js is not None and res.status == 201:
            if res.header("location") != "/v1/skeletons/" + str(js.get("id")):
                why.append("Location %r does not name id %r" % (res.header("location"), js.get("id")))
        if "expect_ids" in ex and js is not None:
            ids = {s.get("id") for s in js.get("skeletons", [])}
            missing = [i for i in ex["expect_ids"] if i not in ids]
            if missing:
                why.append("list lacks %s" % missing)
    seen[ex["name"]] = js if isinstance(js, dict) else {}
    if why:
        fail("%s %s %s" % (ex["name"], ex["method"], ex["path"]), "; ".join(why))
    else:
        ok("%s %s %s -> %d" % (ex["name"], ex["method"], ex["path"], res.status))


# ---- the daemon ------------------------------------------------------------------------------

def start_daemon(binary, args, log):
    p = subprocess.Popen([binary, "--listen", "127.0.0.1:0"] + args, stdout=subprocess.PIPE, stderr=log,
                         stdin=subprocess.DEVNULL)
    deadline = time.time() + 10
    line = b""
    while time.time() < deadline and not line.endswith(b"\n"):
        r, _, _ = select.select([p.stdout], [], [], 0.2)
        if r:
            c = os.read(p.stdout.fileno(), 1)
            if not c:
                break
            line += c
        elif p.poll() is not None:
            break
    m = re.match(rb"listening on 127\.0\.0\.1:(\d+)\s*$", line)
    if not m:
        p.kill()
        p.wait()
        raise RuntimeError("skinnerd did not print 'listening on 127.0.0.1:PORT' first (got %r)" % line)

    def drain():  # keep its stdout from filling up
        while p.stdout.read(65536):
            pass
    threading.Thread(target=drain, daemon=True).start()
    return p, int(m.group(1))


def stop_daemon(p):
    if p.poll() is None:
        p.terminate()
        try:
            rc = p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return "did not exit within 10 s of SIGTERM (killed)"
        if rc != 0:
            return "exit status %d after SIGTERM" % rc
        return None
    return "had already exited with status %d" % p.returncode


def main():
    schemas = load_schemas()
    for fn, s in schemas.items():
        try:
            jsonschema.Draft202012Validator.check_schema(s)
            if s.get("$id") != BASE_URI + fn:
                raise ValueError("$id %r, expected %r" % (s.get("$id"), BASE_URI + fn))
            ok("schemas/%s is a valid JSON Schema 2020-12" % fn)
        except (jsonschema.SchemaError, ValueError) as e:
            fail("schemas/%s" % fn, str(e)[:300])
    validator = make_validator_factory(schemas)
    check_openapi(schemas)
    with open(os.path.join(EXAMPLES, "examples.json")) as f:
        doc = json.load(f)
    examples = doc["examples"]
    # Babylon's Bone API (issue 13): its own generated file, same daemon, after these
    with open(os.path.join(EXAMPLES, "bone-api.json")) as f:
        examples += json.load(f)["examples"]
    # AnimationEvents: generated by gen_events_examples.py
    with open(os.path.join(EXAMPLES, "events.json")) as f:
        examples += json.load(f)["examples"]
    names = [e["name"] for e in examples]
    if len(set(names)) != len(names):
        fail("example names are unique", "duplicates")
    check_example_requests(examples, validator)

    binary = os.environ.get("SKINNERD", "./skinnerd")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print("# SKIP daemon part: %s not found (set SKINNERD)" % binary)
        print("proto_examples: %d passed, %d failed" % (passed, failed))
        return 1 if failed else 77

    log = tempfile.TemporaryFile()
    p = None
    try:
        p, port = start_daemon(binary, doc.get("daemon_args", []), log)
        print("# %s listening on 127.0.0.1:%d" % (binary, port))
        seen = {}
        for ex in examples:
            try:
                run_example(port, ex, validator, seen)
            except (OSError, IOError, ValueError) as e:
                fail("%s %s %s" % (ex["name"], ex["method"], ex["path"]), "request failed: %s" % e)
            if p.poll() is not None:
                fail("skinnerd still running after %s" % ex["name"], "exited with status %d" % p.returncode)
                break
    except RuntimeError as e:
        fail("skinnerd starts", e)
    finally:
        if p is not None:
            why = stop_daemon(p)
            fail("skinnerd stops on SIGTERM", why) if why else ok("skinnerd exits 0 on SIGTERM")
        if failed:
            log.seek(0)
            tail = log.read()[-3000:].decode("utf-8", "replace")
            if tail:
                print("# skinnerd stderr (tail):\n" + "\n".join("#   " + l for l in tail.splitlines()))
        log.close()
    print("proto_examples: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
