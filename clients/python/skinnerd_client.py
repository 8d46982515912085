"""skinnerd_client: a Python client for skinnerd's HTTP API v1 (proto/README.md).

One module, standard library only (numpy is used when present, never
required), so it runs in Blender's Python, a render farm's job script and CI.

    import skinnerd_client as sk
    c = sk.Client("http://127.0.0.1:8080", token=None)
    fox = c.upload("fox", "tests/data/Fox.glb")          # a glTF/GLB, JSON or Babylon file
    frames = c.range("fox", "Walk", 0, 10, fps=30)       # chunked under --max-frames
    m = frames.matrix(5, fox.slot_of("b_Head_05"))       # 16 floats

What it does for you:
- uploads: a dict (the case format's skeleton or Babylon's Skeleton.serialize()),
  bytes or a path; the content type is chosen from the bytes (GLB magic,
  glTF JSON) or the file's extension;
- poses, /poses batches (split to fit --max-batch) and frame ranges
  (split to fit --max-frames), JSON or binary; a chunked range answers the
  same bytes as one whole request: each chunk asks the frame times the
  daemon itself computes (from + i / fps, or k / fps for frame indices);
- binary answers as `Frames`: one buffer, `memoryview`/`array` views per
  pose and matrix, `numpy()` when numpy is installed;
- the slot <-> bone map of a skeleton (`Skeleton.slot_of`, `bone_of`);
- Bone-API ops (`op`, `ik`, ...) and POST /ops;
- errors as exceptions by status (`NotFound`, `Unprocessable`, ...), with the
  problem+json's kind, pointer and detail;
- bearer tokens, TLS (an `ssl.SSLContext`), keep-alive connections per thread,
  retries of 503 answers that carry Retry-After.
"""

import array
import http.client
import json
import math
import os
import re
import ssl
import sys
import threading
import time
import urllib.parse

__all__ = [
    "Client", "Skeleton", "Frames", "SkinnerdError", "BadRequest", "Unauthorized", "Forbidden", "NotFound",
    "MethodNotAllowed", "NotAcceptable", "PreconditionFailed", "TooLarge", "UnsupportedMediaType", "Unprocessable", "Overloaded",
    "ProtocolError", "op", "ik", "look_at", "query", "frame_times", "range_frame_count",
]

__version__ = "1.0.0"

MAT4 = "application/octet-stream"
MAT3X4 = "application/x-skinner-mat3x4"
JSON = "application/json"
GLB = "model/gltf-binary"
GLTF = "model/gltf+json"
_FORMATS = {"json": JSON, "mat4": MAT4, "f32": MAT4, "mat3x4": MAT3X4, "f32x12": MAT3X4}

# ---- errors ------------------------------------------------------------------------------


class SkinnerdError(Exception):
    """A problem+json answer (RFC 9457). `kind` is the last segment of its
    type (`wrong-type`, `not-found`, ...), `pointer` the RFC 6901 pointer of
    the field in the request body ("" = the body as a whole)."""

    def __init__(self, status, problem, headers=None):
        self.status = status
        self.problem = problem if isinstance(problem, dict) else {}
        self.headers = dict(headers or {})
        p = self.problem
        self.kind = str(p.get("type", "")).rsplit("/", 1)[-1] or None
        self.title = p.get("title")
        self.detail = p.get("detail")
        self.pointer = p.get("pointer")
        self.line, self.column = p.get("line"), p.get("column")
        ra = _header(self.headers, "Retry-After")
        self.retry_after = float(ra) if ra and re.fullmatch(r"\d+(\.\d+)?", ra.strip()) else None
        where = " at %s" % self.pointer if self.pointer else ""
        super().__init__("%d %s%s: %s" % (status, self.kind or "error", where, self.detail or self.title or ""))


class BadRequest(SkinnerdError):
    """400: malformed JSON, a bad id, an unknown query parameter."""


class Unauthorized(SkinnerdError):
    """401: no token, or not a bearer token."""


class Forbidden(SkinnerdError):
    """403: the token's scope is below the route's."""


class NotFound(SkinnerdError):
    """404: route, skeleton, bone or clip."""


class MethodNotAllowed(SkinnerdError):
    """405."""


class NotAcceptable(SkinnerdError):
    """406."""


class PreconditionFailed(SkinnerdError):
    """412: If-Match names a version that is no longer the stored one."""


class TooLarge(SkinnerdError):
    """413: a body, batch, range or answer over one of the daemon's limits."""


class UnsupportedMediaType(SkinnerdError):
    """415."""


class Unprocessable(SkinnerdError):
    """422: semantically invalid (a wrong type, an unknown field, a cycle, ...)."""


class Overloaded(SkinnerdError):
    """503: overloaded or out of memory; `retry_after` in seconds when given."""


class ProtocolError(Exception):
    """An answer that does not have the shape the API promises."""


_BY_STATUS = {400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
              406: NotAcceptable, 412: PreconditionFailed, 413: TooLarge, 415: UnsupportedMediaType, 422: Unprocessable, 503: Overloaded}


def _header(headers, name):
    for k, v in headers.items():
        if k.lower() == name.lower():
            return v
    return None


def _error(status, body, headers):
    try:
        problem = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        problem = {"detail": body[:200].decode("utf-8", "replace")}
    return _BY_STATUS.get(status, SkinnerdError)(status, problem, headers)


# ---- skeletons and frames ------------------------------------------------------------------


class Skeleton:
    """The answer to an upload or GET: `id`, `order` (bone names, parent
    first) and `slots` (slots[k] is the matrix slot of bone order[k], -1 for
    none); `info` is the whole answer."""

    def __init__(self, info):
        self.info = info
        self.id = info.get("id")
        self.order = list(info.get("order", []))
        slots = info.get("slots")
        if slots is None and isinstance(info.get("bones"), list):  # GET answers carry "index" per bone
            slots = [b.get("index", -1) for b in info["bones"]]
        self.slots = list(slots or [])
        self._slot = {n: s for n, s in zip(self.order, self.slots)}
        self._bone = {s: n for n, s in zip(self.order, self.slots) if s >= 0}

    @property
    def bone_count(self):
        """B: the matrices of a pose before the trailing identity."""
        return (max(self.slots) + 1) if self.slots else 0

    def slot_of(self, bone):
        """The matrix slot of bone `bone` (KeyError when unknown, None when it has none)."""
        s = self._slot[bone]
        return s if s >= 0 else None

    def bone_of(self, slot):
        """The bone whose matrix is slot `slot`, or None (a slot no bone writes, the trailing identity)."""
        return self._bone.get(slot)

    def animations(self):
        return [a.get("name") for a in self.info.get("animations", [])]

    def __repr__(self):
        return "Skeleton(%r, %d bones)" % (self.id, len(self.order))


class Frames:
    """A binary pose answer: P poses back to back, each of `matrices` final
    matrices (B + 1, the last the identity) of `floats_per_matrix` float32
    (16 for mat4, 12 for mat3x4), plus world matrices and positions when the
    request's output asked for them (`extra_floats` per pose)."""

    def __init__(self, data, pose_count, matrices, floats_per_matrix, extra_floats=0):
        self.data = bytes(data)
        self.pose_count, self.matrices, self.floats_per_matrix = pose_count, matrices, floats_per_matrix
        self.extra_floats = extra_floats
        self.floats_per_pose = matrices * floats_per_matrix + extra_floats
        if len(self.data) != 4 * self.floats_per_pose * pose_count:
            raise ProtocolError("binary answer of %d bytes; %d poses x %d floats expected" %
                                (len(self.data), pose_count, self.floats_per_pose))
        self._floats = None

    @property
    def bone_count(self):
        return self.matrices - 1

    def floats(self):
        """All the floats as a memoryview of format 'f' (native order, so
        swapped once on a big-endian host)."""
        if self._floats is None:
            if sys.byteorder == "little":
                self._floats = memoryview(self.data).cast("f")
            else:
                a = array.array("f", self.data)
                a.byteswap()
                self._floats = memoryview(a)
        return self._floats

    def array(self):
        """A copy as array.array('f')."""
        return array.array("f", self.floats().tobytes())

    def pose(self, i):
        """Pose i's floats (a memoryview): its final matrices, then world and positions if asked."""
        if not 0 <= i < self.pose_count:
            raise IndexError("pose %d of %d" % (i, self.pose_count))
        at = i * self.floats_per_pose
        return self.floats()[at:at + self.floats_per_pose]

    def matrix(self, pose, slot):
        """Final matrix `slot` of pose `pose` (16 or 12 floats, a memoryview)."""
        if not 0 <= slot < self.matrices:
            raise IndexError("slot %d of %d" % (slot, self.matrices))
        at = slot * self.floats_per_matrix
        return self.pose(pose)[at:at + self.floats_per_matrix]

    def numpy(self):
        """(P, B + 1, 16 or 12) float32 final matrices (numpy required; a view when the poses carry nothing else)."""
        import numpy as np
        a = np.frombuffer(self.data, dtype="<f4").reshape(self.pose_count, self.floats_per_pose)
        return a[:, :self.matrices * self.floats_per_matrix].reshape(self.pose_count, self.matrices,
                                                                     self.floats_per_matrix)

    def __len__(self):
        return self.pose_count

    def __repr__(self):
        return "Frames(%d poses x %d matrices x %d floats)" % (self.pose_count, self.matrices, self.floats_per_matrix)

    @staticmethod
    def concat(parts):
        if len(parts) == 1:
            return parts[0]
        p0 = parts[0]
        return Frames(b"".join(p.data for p in parts), sum(p.pose_count for p in parts), p0.matrices,
                      p0.floats_per_matrix, p0.extra_floats)


# ---- frame times, as the daemon computes them -----------------------------------------------


def range_frame_count(from_, to, fps):
    """The frames of a from/to/fps range: floor((to - from) * fps + 1e-9) + 1, as the daemon counts them."""
    if not fps > 0 or to < from_:
        raise ValueError("a range needs fps > 0 and to >= from")
    return int(math.floor((to - from_) * fps + 1e-9)) + 1


def frame_times(from_, fps, start, end):
    """Times of frames [start, end) of a range starting at `from_`: from + i / fps,
    the daemon's doubles (so a chunk asked by its times gives the whole range's bytes)."""
    return [from_ + i / fps for i in range(start, end)]


# ---- ops ------------------------------------------------------------------------------------


def op(name, bone=None, **fields):
    """A Bone-API op: op("rotate", "b_Head_05", axis=[0, 1, 0], amount=0.5, space="world")."""
    o = {"op": name}
    if bone is not None:
        o["bone"] = bone
    o.update({_camel(k): v for k, v in fields.items() if v is not None})
    return o


def ik(bone, target, pole_target=None, pole_angle=None, **fields):
    """Babylon's BoneIKController on `bone` (the chain's end's parent, as in Babylon), aimed at `target`."""
    return op("ik", bone, target=list(target), pole_target=None if pole_target is None else list(pole_target),
              pole_angle=pole_angle, **fields)


def look_at(bone, target, **fields):
    """Babylon's BoneLookController on `bone`, towards `target`."""
    return op("lookAt", bone, target=list(target), **fields)


def query(bone, get, **fields):
    """A read-back (`absolutePosition`, `rotation`, ...): answered in the result's "queries"."""
    return op("query", bone, get=get, **fields)


def _camel(k):
    head, *rest = k.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


# ---- the client -----------------------------------------------------------------------------

_POSE_KEYS = ("bones", "animation", "time", "loop", "layers", "ops", "mesh", "output", "initial_skin_matrix")
_RETRY_STATUS = 503


class Client:
    """One daemon. Thread-safe: each thread keeps its own keep-alive connection.

    url: http://host:port or https://host:port (a path prefix is kept, for a
    proxy); token: a bearer token (--tokens); ssl_context: for https (default
    ssl.create_default_context(); pass one with cafile= for a self-signed
    certificate); retries: how many times a 503 carrying Retry-After is
    retried, sleeping what it says (at most max_retry_wait seconds each);
    max_frames/max_batch: the daemon's --max-frames/--max-batch if they are
    below the defaults (1024); on a 413 the client also learns them."""

    def __init__(self, url="http://127.0.0.1:8080", token=None, ssl_context=None, timeout=60.0, retries=4,
                 max_retry_wait=10.0, max_frames=1024, max_batch=1024, headers=None):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("url must be http://HOST[:PORT] or https://HOST[:PORT]")
        self.scheme, self.host = u.scheme, u.hostname
        self.port = u.port or (443 if u.scheme == "https" else 80)
        self.prefix = u.path.rstrip("/")
        self.token, self.timeout = token, timeout
        self.ssl_context = ssl_context if ssl_context is not None or u.scheme == "http" else \
            ssl.create_default_context()
        self.retries, self.max_retry_wait = retries, max_retry_wait
        self.max_frames, self.max_batch = max_frames, max_batch
        self.extra_headers = dict(headers or {})
        self._local = threading.local()
        self._frames_index = None  # does the daemon take "frames": [start, end]? (None: not asked yet)

    # -- transport --

    def _conn(self, fresh=False):
        c = getattr(self._local, "conn", None)
        if c is not None and not fresh:
            return c, True
        if c is not None:
            c.close()
        if self.scheme == "https":
            c = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self.ssl_context)
        else:
            c = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        self._local.conn = c
        return c, False

    def close(self):
        """Closes this thread's connection (others close when their threads end)."""
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def request(self, method, path, body=None, content_type=None, accept=None, query=None):
        """One request: (status, headers dict, body bytes) of a 2xx; raises a
        SkinnerdError for a problem answer. `body`: bytes, str, or a JSON value."""
        if body is not None and not isinstance(body, (bytes, bytearray, memoryview, str)):
            body = json.dumps(body, separators=(",", ":"), allow_nan=False)
            content_type = content_type or JSON
        if isinstance(body, str):
            body = body.encode("utf-8")
        url = self.prefix + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        h = dict(self.extra_headers)
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if body is not None:
            h["Content-Type"] = content_type or JSON
        if accept:
            h["Accept"] = accept
        attempt = 0
        while True:
            status, headers, data = self._send(method, url, body, h)
            if 200 <= status < 300:
                return status, headers, data
            err = _error(status, data, headers)
            if status == _RETRY_STATUS and err.retry_after is not None and attempt < self.retries:
                attempt += 1
                time.sleep(min(err.retry_after, self.max_retry_wait))
                continue
            raise err

    def _send(self, method, url, body, headers):
        # A kept-alive connection the daemon closed (--idle-timeout) fails on
        # first use: that request never reached it, so it is sent once more.
        for again in (False, True):
            c, reused = self._conn(fresh=again)
            try:
                c.request(method, url, body=body, headers=headers)
                r = c.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest, http.client.BadStatusLine):
                c.close()
                self._local.conn = None
                if reused and not again:
                    continue
                raise
            hdrs = {k: v for k, v in r.getheaders()}
            if r.will_close:
                c.close()
                self._local.conn = None
            return r.status, hdrs, data

    def _json(self, method, path, body=None, **kw):
        _, _, data = self.request(method, path, body, **kw)
        return json.loads(data) if data else None

    # -- skeletons --

    @staticmethod
    def _skel_path(sid):
        return "/v1/skeletons/" + urllib.parse.quote(sid, safe="")

    @staticmethod
    def _upload_body(data, content_type):
        """(bytes or JSON value, content type) of an upload."""
        if isinstance(data, (str, os.PathLike)) and not (isinstance(data, str) and data.lstrip().startswith("{")):
            path = os.fspath(data)
            with open(path, "rb") as f:
                raw = f.read()
            if content_type is None and path.lower().endswith(".glb"):
                content_type = GLB
            data = raw
        if isinstance(data, str):
            data = data.encode("utf-8")
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = bytes(data)
            if content_type is None:
                if data[:4] == b"glTF":
                    content_type = GLB
                else:
                    try:
                        j = json.loads(data)
                    except ValueError:
                        j = None
                    content_type = GLTF if isinstance(j, dict) and "asset" in j else JSON
            return data, content_type
        if isinstance(data, dict):
            return data, content_type or (GLTF if "asset" in data else JSON)
        raise TypeError("upload takes a dict, bytes, a JSON string or a path")

    def upload(self, sid, data, content_type=None, skin=None, dry_run=False):
        """PUT /v1/skeletons/{sid}: a skeleton dict (case format or Babylon's
        Skeleton.serialize()), a glTF JSON/GLB as bytes, or a file path.
        `skin`: the glTF skin (index or name). Returns a Skeleton."""
        body, ct = self._upload_body(data, content_type)
        q = {}
        if skin is not None:
            q["skin"] = str(skin)
        if dry_run:
            q["dryRun"] = "true"
        return Skeleton(self._json("PUT", self._skel_path(sid), body, content_type=ct, query=q))

    def create(self, data, content_type=None, skin=None):
        """POST /v1/skeletons: stored under the body's content id (the same body, the same id)."""
        body, ct = self._upload_body(data, content_type)
        return Skeleton(self._json("POST", "/v1/skeletons", body, content_type=ct,
                                   query={"skin": str(skin)} if skin is not None else None))

    def skeletons(self):
        """[{"id", "bones"}] sorted by id."""
        return self._json("GET", "/v1/skeletons")["skeletons"]

    def skeleton(self, sid):
        """GET /v1/skeletons/{sid} as a Skeleton (its info has bones and animations)."""
        return Skeleton(self._json("GET", self._skel_path(sid)))

    def delete(self, sid):
        self.request("DELETE", self._skel_path(sid))

    def patch_bones(self, sid, bones):
        """PATCH .../bones: {name: {position|rotation|..., bind, rest}}, all or nothing."""
        return Skeleton(self._json("PATCH", self._skel_path(sid) + "/bones", {"bones": bones}))

    def rest(self, sid, bones=None):
        """POST .../rest: the whole skeleton, or the named bones, back to rest."""
        return Skeleton(self._json("POST", self._skel_path(sid) + "/rest", {} if bones is None else {"bones": bones}))

    def apply_ops(self, sid, ops, **fields):
        """POST .../ops: Bone-API ops applied to the stored skeleton, all or nothing."""
        body = {"ops": list(ops)}
        body.update({_camel(k): v for k, v in fields.items()})
        return self._json("POST", self._skel_path(sid) + "/ops", body)

    def animation(self, sid, clip):
        return self._json("GET", self._skel_path(sid) + "/animations/" + urllib.parse.quote(str(clip), safe=""))

    def add_animations(self, sid, body):
        """POST .../animations (retargeting, Babylon clips): the body as proto/README.md describes it."""
        return self._json("POST", self._skel_path(sid) + "/animations", body)

    def healthz(self):
        return self._json("GET", "/healthz")

    def readyz(self):
        return self._json("GET", "/readyz")

    def metrics(self):
        """/metrics as {"name{labels}": value}."""
        _, _, data = self.request("GET", "/metrics")
        out = {}
        for line in data.decode().splitlines():
            if line and not line.startswith("#"):
                k, _, v = line.rpartition(" ")
                out[k] = float(v)
        return out

    # -- poses --

    @staticmethod
    def pose_body(bones=None, **fields):
        """A pose object: bones plus any pose field (snake_case or camelCase)."""
        p = {} if bones is None else {"bones": bones}
        p.update({_camel(k): v for k, v in fields.items() if v is not None})
        return p

    def _answer(self, headers, data, fmt, outputs):
        if fmt == JSON:
            return json.loads(data)
        try:
            poses = int(_header(headers, "Skinner-Pose-Count"))
            mats = int(_header(headers, "Skinner-Matrix-Count"))
        except (TypeError, ValueError):
            raise ProtocolError("binary answer without Skinner-Pose-Count/Skinner-Matrix-Count")
        fpm = 12 if fmt == MAT3X4 else 16
        extra = 0
        if outputs and "world" in outputs:
            extra += fpm * (mats - 1)
        if outputs and "positions" in outputs:
            extra += 3 * (mats - 1)
        return Frames(data, poses, mats, fpm, extra)

    def _post_pose(self, sid, route, body, fmt, outputs):
        _, h, data = self.request("POST", self._skel_path(sid) + route, body, accept=fmt)
        return self._answer(h, data, fmt, outputs)

    def pose(self, sid, bones=None, format="json", **fields):
        """POST .../pose, one request as given: a dict ({"final": [...]}, or
        {"results": [...]} for a range) or, with format "mat4"/"mat3x4", Frames.
        Fields: animation, time, loop, layers, ops, mesh, output,
        initial_skin_matrix, times, from_ (as "from"), to, fps, ..."""
        fmt = _FORMATS[format]
        if "from_" in fields:
            fields["from"] = fields.pop("from_")
        body = self.pose_body(bones, **fields)
        return self._post_pose(sid, "/pose", body, fmt, body.get("output"))

    def poses(self, sid, poses, format="json"):
        """POST .../poses: a list of pose dicts, split into batches the daemon
        takes (--max-batch); JSON: {"results": [...]}; binary: Frames."""
        fmt = _FORMATS[format]
        poses = list(poses)
        outs = {tuple(p.get("output") or ()) for p in poses}
        if fmt != JSON and len(outs) > 1:
            raise ValueError("a binary batch is decoded by one output list: give every pose the same one")
        outputs = list(outs.pop()) if outs else None
        parts, i = [], 0
        while i < len(poses):
            n = max(1, self.max_batch)
            try:
                parts.append(self._post_pose(sid, "/poses", {"poses": poses[i:i + n]}, fmt, outputs))
            except TooLarge as e:
                if n == 1 or not self._learn_limit(e, "max_batch", n):
                    raise
                continue
            i += n
        return self._merge(parts, fmt) if parts else ({"results": []} if fmt == JSON else None)

    def _learn_limit(self, err, attr, asked):
        """After a 413 for `asked` items: lowers self.<attr> to the daemon's
        stated limit (or half) and says whether a retry is worth it."""
        m = re.search(r"the limit is (\d+)", err.detail or "")
        limit = int(m.group(1)) if m else asked // 2
        if not 1 <= limit < asked:
            limit = asked // 2
        if limit < 1:
            return False
        setattr(self, attr, limit)
        return True

    @staticmethod
    def _merge(parts, fmt):
        if fmt != JSON:
            return Frames.concat(parts)
        out = {"results": []}
        for p in parts:
            out["results"].extend(p["results"])
        return out

    def range(self, sid, animation, from_, to, fps, format="json", **fields):
        """Every frame of `animation` from `from_` to `to` seconds at `fps`
        (frame i at from + i / fps, `to` included as the daemon counts it),
        chunked under --max-frames; the same bytes as one whole request."""
        n = range_frame_count(from_, to, fps)
        fmt = _FORMATS[format]
        body = self.pose_body(animation=animation, **fields)
        if n <= self.max_frames:
            try:
                return self._post_pose(sid, "/pose", dict(body, **{"from": from_, "to": to, "fps": fps}), fmt,
                                       body.get("output"))
            except TooLarge as e:
                if not self._learn_limit(e, "max_frames", n):
                    raise
        return self._chunks(sid, body, fmt, n, lambda s, e: {"times": frame_times(from_, fps, s, e)})

    def frames(self, sid, animation, fps, start, end, format="json", **fields):
        """Frames [start, end) of `animation` at `fps`, frame k at k / fps
        seconds: by "frames": [start, end] where the daemon takes it, else by
        the same times; chunked under --max-frames."""
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end) or not fps > 0:
            raise ValueError("frames need integers 0 <= start <= end and fps > 0")
        fmt = _FORMATS[format]
        body = self.pose_body(animation=animation, fps=fps, **fields)
        if self._frames_index is None and end > start:
            try:
                k = min(end, start + self.max_frames)
                first = self._post_pose(sid, "/pose", dict(body, frames=[start, k]), fmt, body.get("output"))
                self._frames_index = True
                if k == end:
                    return first
                rest = self.frames(sid, animation, fps, k, end, format, **fields)
                return self._merge([first, rest], fmt)
            except Unprocessable as e:
                if e.pointer != "/frames" or "unknown field" not in (e.detail or ""):
                    raise
                self._frames_index = False  # a daemon before frame indices: "unknown field"
            except TooLarge as e:
                if not self._learn_limit(e, "max_frames", min(end - start, self.max_frames)):
                    raise
                self._frames_index = True
        if self._frames_index:
            return self._chunks(sid, body, fmt, end - start, lambda s, e: {"frames": [start + s, start + e]})
        del body["fps"]
        return self._chunks(sid, body, fmt, end - start, lambda s, e: {"times": [k / fps for k in
                                                                                 range(start + s, start + e)]})

    def _chunks(self, sid, body, fmt, n, part):
        parts, i = [], 0
        while i < n:
            k = min(n, i + max(1, self.max_frames))
            try:
                a = self._post_pose(sid, "/pose", dict(body, **part(i, k)), fmt, body.get("output"))
            except TooLarge as e:
                if k - i == 1 or not self._learn_limit(e, "max_frames", k - i):
                    raise
                continue
            if fmt == JSON and "results" not in a:  # one frame of "times" still answers results
                a = {"results": [a]}
            parts.append(a)
            i = k
        return self._merge(parts, fmt)
