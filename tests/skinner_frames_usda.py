#!/usr/bin/env python3
"""skinner frames --output vertices --format usda, and the point cache
header (docs/mesh.md, proto/mesh.md), read back and held to skinnerd:

- the USD layer, read by tests/usda_read.py, has one Mesh per skinned
  primitive whose points, normals and extent at every time code are the
  daemon's "vertices", "normals" and "bounds" for the same frames, float32
  bit for bit (each number read as a double and rounded to float32, as USD
  reads a float3), faceVertexIndices the glTF indices accessor (read here
  from the GLB), timeCodesPerSecond the fps, start/endTimeCode the frames;
- chunked and resumed exports (--frames) hold the whole export's sample
  lines byte for byte and differ from it only in start/endTimeCode;
- --header writes the documented header before the raw float32, whose body
  is the headerless file's, and chunk bodies join into the whole body;
- --threads 3 gives --threads 1's bytes (tests/check_sk_usda.c does the
  same on a 70k-vertex primitive)."""
import json, os, struct, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import Checks  # noqa: E402
from skinnerd_ops import Daemon  # noqa: E402
import usda_read  # noqa: E402

SKINNER = os.environ.get("SKINNER", "./skinner")
DATA = os.path.join(os.environ.get("SK_TEST_DATA", "tests"), "data")
C = Checks("skinner_frames_usda")
FPS = 24


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(values):
    return [struct.pack("<f", v) for v in values]


def flat(tuples):
    return [x for t in tuples for x in t]


def glb_indices(path):
    """{(mesh, prim): [indices]} from the GLB's JSON and BIN chunks."""
    data = open(path, "rb").read()
    jlen = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + jlen])
    bin_at = 20 + jlen + 8
    out = {}
    fmt = {5121: "B", 5123: "H", 5125: "I"}
    for m, mesh in enumerate(doc["meshes"]):
        for p, prim in enumerate(mesh["primitives"]):
            if "indices" not in prim:
                continue
            acc = doc["accessors"][prim["indices"]]
            bv = doc["bufferViews"][acc["bufferView"]]
            c = fmt[acc["componentType"]]
            size = struct.calcsize(c)
            stride = bv.get("byteStride", size)
            at = bin_at + bv.get("byteOffset", 0) + acc.get("byteOffset", 0)
            out[(m, p)] = [struct.unpack_from("<" + c, data, at + i * stride)[0] for i in range(acc["count"])]
    return out


def skinner(asset, args, out):
    r = subprocess.run([SKINNER, "frames", os.path.join(DATA, asset), *args, "-o", out], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
    return r.returncode


def split_samples(text):
    """The layer without its start/endTimeCode lines and sample lines, and
    the sample lines keyed by (attribute line before them, time code)."""
    rest, lines, attr = [], {}, None
    for line in text.split("\n"):
        s = line.strip()
        if s.endswith(".timeSamples = {"):
            attr = (len(rest), s)
        if attr is not None and s[:1].isdigit():
            lines[(attr, s.split(":")[0])] = line
            continue
        if not s.startswith(("startTimeCode", "endTimeCode")):
            rest.append(line)
    return "\n".join(rest), lines


def check_layer(asset, clip, n, results, path):
    layer = usda_read.read(open(path).read())
    md = layer.metadata
    C.check("%s: timeCodesPerSecond, framesPerSecond are %d, frames 0..%d" % (asset, FPS, n - 1),
            md.get("timeCodesPerSecond") == FPS and md.get("framesPerSecond") == FPS and
            md.get("startTimeCode") == 0 and md.get("endTimeCode") == n - 1 and md.get("defaultPrim") == "Skinned")
    meshes = [layer.prims[p] for p in layer.order if layer.prims[p].type == "Mesh"]
    want = results[0]["vertices"]
    C.check("%s: one Mesh per skinned primitive, in the daemon's order" % asset,
            [m.metadata["customData"]["gltf"] for m in meshes] == [v["primitive"] for v in want])
    idx = glb_indices(os.path.join(DATA, asset))
    pts_ok = nrm_ok = ext_ok = faces_ok = True
    numbers = 0
    for i, m in enumerate(meshes):
        mesh, prim = (int(x) for x in want[i]["primitive"].split("/")[2::2])
        count = len(want[i]["positions"]) // 3
        fi = [int(x) for x in m.attrs["faceVertexIndices"].default]
        faces_ok &= fi == idx.get((mesh, prim), list(range(count)))
        faces_ok &= list(m.attrs["faceVertexCounts"].default) == [3] * (len(fi) // 3)
        faces_ok &= m.attrs["subdivisionScheme"].default == "none" and m.attrs["orientation"].default == "rightHanded"
        for k in range(n):
            r = results[k]
            got = flat(m.attrs["points"].samples[float(k)])
            pts_ok &= bits(map(f32, got)) == bits(map(f32, r["vertices"][i]["positions"]))
            numbers += len(got)
            if "normals" in r["vertices"][i]:
                got = flat(m.attrs["normals"].samples[float(k)])
                nrm_ok &= m.attrs["normals"].metadata.get("interpolation") == "vertex"
                nrm_ok &= bits(map(f32, got)) == bits(map(f32, r["vertices"][i]["normals"]))
                numbers += len(got)
            else:
                nrm_ok &= "normals" not in m.attrs
            got = flat(m.attrs["extent"].samples[float(k)])
            b = r["bounds"][i]
            ext_ok &= bits(map(f32, got)) == bits(map(f32, b["min"] + b["max"]))
    C.check("%s: faceVertexIndices are the glTF indices, all triangles" % asset, faces_ok)
    C.check("%s: %d frames of points are the daemon's float32 bits (%d numbers with normals)" % (asset, n, numbers),
            pts_ok)
    C.check("%s: normals are the daemon's bits" % asset, nrm_ok)
    C.check("%s: extent is the daemon's bounds" % asset, ext_ok)


THREE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench")


def check_three(asset, path):
    """three.js's USDLoader (when tests/bench has it installed) builds each
    Mesh from the first sample: its positions are our points over our faces,
    float32 bit for bit. Skipped without node or three."""
    if not os.path.isdir(os.path.join(THREE, "node_modules", "three")):
        if asset == "Fox.glb":
            print("skinner_frames_usda: three.js not installed in tests/bench; its reader not tried")
        return
    r = subprocess.run(["node", os.path.join(THREE, "usda_three.mjs"), path], capture_output=True, text=True)
    got = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    layer = usda_read.read(open(path).read())
    meshes = [layer.prims[p] for p in layer.order if layer.prims[p].type == "Mesh"]
    ok = r.returncode == 0 and [g["name"] for g in got] == [m.path.split("/")[-1] for m in meshes]
    for g, m in zip(got, meshes):
        pts = m.attrs["points"].samples[min(m.attrs["points"].samples)]
        fvi = [int(i) for i in m.attrs["faceVertexIndices"].default]
        order = [g["index"][k] for k in range(len(g["index"]))] if g["index"] else range(len(g["positions"]) // 3)
        three = [tuple(g["positions"][3 * v:3 * v + 3]) for v in order]
        ok &= [bits(map(f32, t)) for t in three] == [bits(map(f32, pts[i])) for i in fvi]
    C.check("%s: three.js's USDLoader reads the layer: the same meshes, the same float32 points" % asset, ok)


def check_chunks(asset, clip, n, whole, tmp):
    text = open(whole).read()
    skel, lines = split_samples(text)
    got, same = {}, True
    for a, b in ((0, 2), (2, 5), (5, n)):
        out = os.path.join(tmp, "chunk%d.usda" % a)
        rc = skinner(asset, ["--clip", str(clip), "--fps", str(FPS), "--frames", "%d:%d" % (a, b), "--output",
                             "vertices", "--normals", "--format", "usda"], out)
        ct = open(out).read() if rc == 0 else ""
        cs, cl = split_samples(ct)
        same &= rc == 0 and cs == skel and ("startTimeCode = %d\n" % a) in ct and ("endTimeCode = %d\n" % (b - 1)) in ct
        got.update(cl)
    C.check("%s: chunks 0:2, 2:5 and resumed 5:%d hold the whole export's sample lines byte for byte" % (asset, n),
            same and got == lines)


def check_header(asset, clip, n, tmp):
    base = ["--clip", str(clip), "--fps", str(FPS), "--output", "vertices", "--normals"]
    raw, hdr = os.path.join(tmp, "raw.bin"), os.path.join(tmp, "hdr.bin")
    ok = skinner(asset, base + ["--frames", "0:%d" % n], raw) == 0
    ok &= skinner(asset, base + ["--frames", "0:%d" % n, "--header"], hdr) == 0
    body, h = open(raw, "rb").read(), open(hdr, "rb").read()
    magic, size, output, flags, prims, frames, per_frame = struct.unpack_from("<8sIIIIII", h, 0)
    fps, start_s, first = struct.unpack_from("<ddQ", h, 32)
    entries = [struct.unpack_from("<IIII", h, 56 + 16 * i) for i in range(prims)]
    C.check("%s: the point cache header: SKPOINT1, vertices with normals, %d frames at %d fps" % (asset, n, FPS),
            ok and magic == b"SKPOINT1" and size == 56 + 16 * prims and output == 1 and flags == 3 and frames == n and
            fps == FPS and first == 0 and start_s == 0)
    C.check("%s: header sizes add up and the body is the headerless file" % asset,
            ok and per_frame == sum(e[3] for e in entries) and h[size:] == body and
            len(body) == 4 * n * per_frame)
    parts = b""
    for a, b in ((0, 3), (3, n)):
        part = os.path.join(tmp, "part.bin")
        ok &= skinner(asset, base + ["--frames", "%d:%d" % (a, b), "--header"], part) == 0
        p = open(part, "rb").read()
        ok &= struct.unpack_from("<Q", p, 48)[0] == a and struct.unpack_from("<I", p, 24)[0] == b - a
        parts += p[struct.unpack_from("<I", p, 8)[0]:]
    C.check("%s: chunk bodies with headers join into the whole body" % asset, ok and parts == body)


def main():
    d = Daemon("--max-answer-mb", "256")
    tmp = tempfile.mkdtemp()
    try:
        n = 7
        for asset, clip in (("Fox.glb", 1), ("skin_morph.glb", 0), ("RobotExpressive.glb", 3)):
            sid = asset.split(".")[0]
            st, _ = d.req("PUT", "/v1/skeletons/" + sid, open(os.path.join(DATA, asset), "rb").read(),
                          "model/gltf-binary")
            C.check("%s uploads" % asset, st == 201)
            st, body = d.req("POST", "/v1/skeletons/%s/pose" % sid, {
                "animation": clip, "fps": FPS, "frames": [0, n], "output": ["vertices", "normals", "bounds"]})
            C.check("%s range answers" % asset, st == 200)
            results = json.loads(body)["results"] if st == 200 else []
            whole = os.path.join(tmp, sid + ".usda")
            rc = skinner(asset, ["--clip", str(clip), "--fps", str(FPS), "--frames", "0:%d" % n, "--output",
                                 "vertices", "--normals", "--format", "usda"], whole)
            C.check("%s: skinner frames --format usda runs" % asset, rc == 0 and len(results) == n)
            if rc == 0 and len(results) == n:
                check_layer(asset, clip, n, results, whole)
                check_three(asset, whole)
                check_chunks(asset, clip, n, whole, tmp)
        check_header("skin_morph.glb", 0, n, tmp)
        same = True
        for output in ("vertices", "bounds"):
            outs = []
            for t in (1, 3):
                path = os.path.join(tmp, "t%d.bin" % t)
                extra = ["--normals"] if output == "vertices" else []
                same &= skinner("RobotExpressive.glb", ["--clip", "3", "--frames", "0:50", "--output", output,
                                                        "--threads", str(t), *extra], path) == 0
                outs.append(open(path, "rb").read())
            same &= outs[0] == outs[1] and len(outs[0]) > 0
        C.check("RobotExpressive: --threads 3 writes the bytes of --threads 1 (vertices with normals, bounds)", same)
        for extra, text in ((["--format", "usda", "--header"], "--format usda takes --output vertices and no --header"),
                            (["--output", "bounds", "--format", "usda"], "--format usda takes --output vertices"),
                            (["--output", "bounds", "--normals"], "--normals goes with --output vertices"),
                            (["--threads", "0"], "--threads must be an integer in 1..")):
            args = (["--output", "vertices"] if "--output" not in extra else []) + extra
            r = subprocess.run([SKINNER, "frames", os.path.join(DATA, "Fox.glb"), *args], capture_output=True,
                               text=True)
            C.check("%s is refused" % " ".join(args), r.returncode == 2 and text in r.stderr)
    finally:
        d.stop()
    return C.summary()


if __name__ == "__main__":
    sys.exit(main())
