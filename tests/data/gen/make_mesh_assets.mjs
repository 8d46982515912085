#!/usr/bin/env node
// Writes the skinned-mesh test assets of issue 33 into tests/data (deterministic: the same
// bytes every run). `cd tests/data/gen && npm install && node make_mesh_assets.mjs`.
//
//  * skin_morph.glb: a 3-joint tube with two primitives and two morph targets (POSITION
//    and NORMAL deltas; mesh.weights [0.25, 0]); primitive 1 has UNSIGNED_BYTE JOINTS_0 and
//    normalized UNSIGNED_BYTE WEIGHTS_0. Clips: "bend" (LINEAR joint rotations + a LINEAR
//    weights channel), "pulse" (CUBICSPLINE weights going below 0 and above 1, a STEP
//    translation), "still" (only a weights channel, starting at t = 0.2).
//  * skin_8inf.glb: a 9-joint fan, every vertex with 8 influences (JOINTS_0/1, WEIGHTS_0/1,
//    some of them 0, sums not exactly 1 in float32); clip "wave" animates every joint.
//  * skin_mirror.glb: a mirror node (scale -1, 1, 1) above the skeleton root, a joint with
//    non-uniform scale, a joint with negative scale, the skinned node itself with a
//    (ignored) negative scale; clip "flex" animates a non-uniform scale through negative
//    values and rotations.
//  * mesh_bad/*.glb: bad or odd input (badVariant below).
// Licence: made for this project, same licence as the project (tests/data/LICENSES.md).

import { Document, NodeIO } from "@gltf-transform/core";
import { mkdirSync, writeFileSync } from "node:fs";

const OUT = new URL("..", import.meta.url);

// Column-major 4x4 helpers (glTF order).
function compose(t, q, s) {
    const [x, y, z, w] = q;
    const [sx, sy, sz] = s;
    const x2 = x + x, y2 = y + y, z2 = z + z;
    const xx = x * x2, xy = x * y2, xz = x * z2, yy = y * y2, yz = y * z2, zz = z * z2;
    const wx = w * x2, wy = w * y2, wz = w * z2;
    return [
        (1 - (yy + zz)) * sx, (xy + wz) * sx, (xz - wy) * sx, 0,
        (xy - wz) * sy, (1 - (xx + zz)) * sy, (yz + wx) * sy, 0,
        (xz + wy) * sz, (yz - wx) * sz, (1 - (xx + yy)) * sz, 0,
        t[0], t[1], t[2], 1,
    ];
}
function mul(a, b) {
    const r = new Array(16).fill(0);
    for (let c = 0; c < 4; c++)
        for (let row = 0; row < 4; row++)
            for (let k = 0; k < 4; k++) r[c * 4 + row] += a[k * 4 + row] * b[c * 4 + k];
    return r;
}
function invert(m) {
    // Gauss-Jordan on a row-major copy.
    const a = [];
    for (let r = 0; r < 4; r++) a.push([m[r], m[4 + r], m[8 + r], m[12 + r], r === 0 ? 1 : 0, r === 1 ? 1 : 0, r === 2 ? 1 : 0, r === 3 ? 1 : 0]);
    for (let c = 0; c < 4; c++) {
        let p = c;
        for (let r = c + 1; r < 4; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
        [a[c], a[p]] = [a[p], a[c]];
        const d = a[c][c];
        for (let k = 0; k < 8; k++) a[c][k] /= d;
        for (let r = 0; r < 4; r++) {
            if (r === c) continue;
            const f = a[r][c];
            for (let k = 0; k < 8; k++) a[r][k] -= f * a[c][k];
        }
    }
    const out = new Array(16);
    for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) out[c * 4 + r] = a[r][4 + c];
    return out;
}
const quatAxis = (ax, ay, az, angle) => {
    const n = Math.hypot(ax, ay, az);
    const s = Math.sin(angle / 2) / n;
    return [ax * s, ay * s, az * s, Math.cos(angle / 2)];
};
function worldOf(node) {
    let m = compose(node.getTranslation(), node.getRotation(), node.getScale());
    for (let p = node.getParentNode(); p; p = p.getParentNode()) m = mul(compose(p.getTranslation(), p.getRotation(), p.getScale()), m);
    return m;
}

function newDoc(name) {
    const doc = new Document();
    doc.getRoot().getAsset().generator = `skinnerd tests/data/gen/make_mesh_assets.mjs (${name})`;
    const buffer = doc.createBuffer("bin");
    const acc = (type, array, opts = {}) => {
        const a = doc.createAccessor().setType(type).setArray(array).setBuffer(buffer);
        if (opts.normalized) a.setNormalized(true);
        return a;
    };
    return { doc, buffer, acc };
}

function skinFor(doc, acc, joints, root) {
    const skin = doc.createSkin("skin").setSkeleton(root);
    const ibm = [];
    for (const j of joints) {
        skin.addJoint(j);
        ibm.push(...invert(worldOf(j)));
    }
    skin.setInverseBindMatrices(acc("MAT4", new Float32Array(ibm)));
    return skin;
}

/** A tube along +Y: rings of `seg` vertices from y0 to y1, radius r(y). */
function tube(rings, seg, y0, y1, radius) {
    const pos = [], nrm = [], idx = [], ys = [];
    for (let i = 0; i < rings; i++) {
        const y = y0 + ((y1 - y0) * i) / (rings - 1);
        for (let k = 0; k < seg; k++) {
            const a = (2 * Math.PI * k) / seg;
            const r = radius(y);
            pos.push(r * Math.cos(a), y, r * Math.sin(a));
            nrm.push(Math.cos(a), 0, Math.sin(a));
            ys.push(y);
        }
    }
    for (let i = 0; i + 1 < rings; i++)
        for (let k = 0; k < seg; k++) {
            const a = i * seg + k, b = i * seg + ((k + 1) % seg), c = a + seg, d = b + seg;
            idx.push(a, c, b, b, c, d);
        }
    return { pos, nrm, idx, ys };
}

/** Weights of a vertex at height y between joints at heights hs: the two nearest blend. */
function chainWeights(y, hs) {
    let j = 0;
    while (j + 1 < hs.length && y > hs[j + 1]) j++;
    if (j + 1 >= hs.length) return [[j, 1]];
    const t = (y - hs[j]) / (hs[j + 1] - hs[j]);
    return [[j, 1 - t], [j + 1, t]];
}

function skinMorph() {
    const { doc, acc } = newDoc("skin_morph");
    const scene = doc.createScene("scene");
    const hs = [0, 1, 2];
    const j0 = doc.createNode("root").setTranslation([0, 0, 0]);
    const j1 = doc.createNode("mid").setTranslation([0, 1, 0]);
    const j2 = doc.createNode("tip").setTranslation([0, 1, 0]).setRotation(quatAxis(0, 0, 1, 0.1));
    j0.addChild(j1);
    j1.addChild(j2);
    const skin = skinFor(doc, acc, [j0, j1, j2], j0);
    const mesh = doc.createMesh("tube").setWeights([0.25, 0]);
    // Primitive 0: float attributes; primitive 1: a second tube above, byte joints/weights.
    for (const [p, y0, y1] of [[0, 0, 2.2], [1, 2.2, 3]]) {
        const t = tube(p === 0 ? 9 : 4, 8, y0, y1, (y) => 0.3 + 0.05 * Math.sin(3 * y));
        const n = t.pos.length / 3;
        const J = p === 0 ? new Uint16Array(4 * n) : new Uint8Array(4 * n);
        const W = p === 0 ? new Float32Array(4 * n) : new Uint8Array(4 * n);
        for (let v = 0; v < n; v++) {
            const w = chainWeights(t.ys[v], hs);
            w.forEach(([j, x], k) => {
                J[4 * v + k] = j;
                if (p === 0) W[4 * v + k] = x;
                else W[4 * v + k] = k === 0 ? Math.round(x * 255) : 0;
            });
            if (p === 1 && w.length > 1) W[4 * v + 1] = 255 - W[4 * v];
        }
        const prim = doc.createPrimitive()
            .setAttribute("POSITION", acc("VEC3", new Float32Array(t.pos)))
            .setAttribute("NORMAL", acc("VEC3", new Float32Array(t.nrm)))
            .setAttribute("JOINTS_0", acc("VEC4", J))
            .setAttribute("WEIGHTS_0", acc("VEC4", W, { normalized: p === 1 }))
            .setIndices(acc("SCALAR", new Uint16Array(t.idx)));
        // Target 0 bulges (radial, and tilts the normals up); target 1 twists and shrinks.
        const d0 = [], n0 = [], d1 = [], n1 = [];
        for (let v = 0; v < n; v++) {
            const [x, y, z] = t.pos.slice(3 * v, 3 * v + 3);
            const b = 0.4 * Math.sin(Math.PI * y / 3);
            d0.push(x * b, 0.01 * y, z * b);
            n0.push(0, 0.2 * b, 0);
            d1.push(-z * 0.3, -0.05 * y, x * 0.3);
            n1.push(-t.nrm[3 * v + 2] * 0.3, 0, t.nrm[3 * v] * 0.3);
        }
        for (const [d, nn, name] of [[d0, n0, "bulge"], [d1, n1, "twist"]]) {
            prim.addTarget(doc.createPrimitiveTarget(name)
                .setAttribute("POSITION", acc("VEC3", new Float32Array(d)))
                .setAttribute("NORMAL", acc("VEC3", new Float32Array(nn))));
        }
        mesh.addPrimitive(prim);
    }
    mesh.setExtras({ targetNames: ["bulge", "twist"] });
    const body = doc.createNode("body").setMesh(mesh).setSkin(skin);
    scene.addChild(j0).addChild(body);

    const sampler = (input, output, interp, type) =>
        doc.createAnimationSampler().setInput(acc("SCALAR", new Float32Array(input)))
            .setOutput(acc(type, new Float32Array(output))).setInterpolation(interp);
    const channel = (anim, node, path, s) => anim.addSampler(s).addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(s));

    const bend = doc.createAnimation("bend");
    const tb = [0, 0.5, 1, 1.5];
    channel(bend, j1, "rotation", sampler(tb, tb.flatMap((t) => quatAxis(0, 0, 1, 0.8 * Math.sin(2 * t))), "LINEAR", "VEC4"));
    channel(bend, j2, "rotation", sampler(tb, tb.flatMap((t) => quatAxis(1, 0, 0.3, 0.6 * Math.sin(3 * t + 0.5))), "LINEAR", "VEC4"));
    channel(bend, body, "weights", sampler(tb, [0, 0, 1, 0.3, 0.5, 0.9, 0.0, 0.35], "LINEAR", "SCALAR"));

    const pulse = doc.createAnimation("pulse");
    const tp = [0, 0.4, 1.1];
    // CUBICSPLINE: per key [inTangent(2), value(2), outTangent(2)].
    channel(pulse, body, "weights", sampler(tp, [0, 0, 0.2, 0.7, 1.5, -0.5, 1, 2, 1.3, -0.2, -1, 0.5, 0.5, 1, -0.1, 0.4, 0, 0], "CUBICSPLINE", "SCALAR"));
    channel(pulse, j0, "translation", sampler(tp, [0, 0, 0, 0.1, 0.2, 0, -0.1, 0.3, 0.05], "STEP", "VEC3"));
    channel(pulse, j1, "rotation", sampler([0, 1.1], [...quatAxis(0, 0, 1, -0.4), ...quatAxis(0, 1, 1, 0.9)], "LINEAR", "VEC4"));

    const still = doc.createAnimation("still");
    channel(still, body, "weights", sampler([0.2, 0.9], [0.6, 0.1, 0.05, 1], "LINEAR", "SCALAR"));
    return doc;
}

function skin8() {
    const { doc, acc } = newDoc("skin_8inf");
    const scene = doc.createScene("scene");
    const root = doc.createNode("hub").setTranslation([0, 0.5, 0]);
    const joints = [root];
    for (let k = 0; k < 8; k++) {
        const a = (2 * Math.PI * k) / 8;
        const j = doc.createNode(`spoke${k}`).setTranslation([Math.cos(a), 0, Math.sin(a)]).setRotation(quatAxis(0, 1, 0, -a));
        root.addChild(j);
        joints.push(j);
    }
    const skin = skinFor(doc, acc, joints, root);
    // A disc of rings around the hub; each vertex weighs all 8 spokes by closeness, and
    // the hub when there is room (so 8 influences of 9 joints, some weights 0).
    const pos = [], nrm = [], idx = [], J0 = [], J1 = [], W0 = [], W1 = [];
    const rings = 5, seg = 16;
    for (let i = 0; i < rings; i++) {
        const r = 0.2 + (1.1 * i) / (rings - 1);
        for (let k = 0; k < seg; k++) {
            const a = (2 * Math.PI * k) / seg;
            pos.push(r * Math.cos(a), 0.5 + 0.1 * Math.sin(2 * a), r * Math.sin(a));
            nrm.push(0.1 * Math.cos(a), 1, 0.1 * Math.sin(a));
            const raw = [];
            for (let s = 0; s < 8; s++) {
                const b = (2 * Math.PI * s) / 8;
                const d = Math.hypot(r * Math.cos(a) - Math.cos(b), r * Math.sin(a) - Math.sin(b));
                raw.push([s + 1, Math.exp(-2 * d * d)]);
            }
            raw.push([0, i === 0 ? 2 : 0.5 / (i + 1)]);
            raw.sort((x, y) => y[1] - x[1]);
            const top = raw.slice(0, 8);
            if (k % 4 === 1) top[7][1] = 0; // some zero weights
            if (k % 4 === 3) top[6][1] = 0;
            const sum = top.reduce((s, x) => s + x[1], 0);
            top.forEach(([j, w], n) => {
                (n < 4 ? J0 : J1).push(j);
                (n < 4 ? W0 : W1).push(w / sum);
            });
        }
    }
    for (let i = 0; i + 1 < rings; i++)
        for (let k = 0; k < seg; k++) {
            const a = i * seg + k, b = i * seg + ((k + 1) % seg);
            idx.push(a, a + seg, b, b, a + seg, b + seg);
        }
    const prim = doc.createPrimitive()
        .setAttribute("POSITION", acc("VEC3", new Float32Array(pos)))
        .setAttribute("NORMAL", acc("VEC3", new Float32Array(nrm)))
        .setAttribute("JOINTS_0", acc("VEC4", new Uint8Array(J0)))
        .setAttribute("JOINTS_1", acc("VEC4", new Uint8Array(J1)))
        .setAttribute("WEIGHTS_0", acc("VEC4", new Float32Array(W0)))
        .setAttribute("WEIGHTS_1", acc("VEC4", new Float32Array(W1)))
        .setIndices(acc("SCALAR", new Uint16Array(idx)));
    const mesh = doc.createMesh("disc").addPrimitive(prim);
    const body = doc.createNode("disc").setMesh(mesh).setSkin(skin);
    scene.addChild(root).addChild(body);
    const anim = doc.createAnimation("wave");
    const ts = [0, 0.25, 0.5, 0.75, 1];
    const add = (node, path, type, values) => {
        const s = doc.createAnimationSampler().setInput(acc("SCALAR", new Float32Array(ts)))
            .setOutput(acc(type, new Float32Array(values))).setInterpolation("LINEAR");
        anim.addSampler(s).addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(s));
    };
    add(root, "rotation", "VEC4", ts.flatMap((t) => quatAxis(0, 1, 0, 0.7 * t)));
    joints.slice(1).forEach((j, k) => {
        const a = (2 * Math.PI * k) / 8;
        add(j, "rotation", "VEC4", ts.flatMap((t) => mulQ(quatAxis(0, 1, 0, -a), quatAxis(1, 0, 0, 0.5 * Math.sin(6 * t + k)))));
        add(j, "translation", "VEC3", ts.flatMap((t) => [Math.cos(a) * (1 + 0.2 * t), 0.3 * Math.sin(4 * t + k), Math.sin(a) * (1 + 0.2 * t)]));
    });
    return doc;
}

function mulQ(a, b) {
    const [ax, ay, az, aw] = a, [bx, by, bz, bw] = b;
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz];
}

function skinMirror() {
    const { doc, acc } = newDoc("skin_mirror");
    const scene = doc.createScene("scene");
    const mirror = doc.createNode("mirror").setScale([-1, 1, 1]).setTranslation([0.5, 0, 0]);
    const j0 = doc.createNode("pelvis").setTranslation([0, 0.2, 0]).setScale([1, 1.5, 0.75]);
    const j1 = doc.createNode("thigh").setTranslation([0, 1, 0]).setRotation(quatAxis(0, 0, 1, 0.3));
    const j2 = doc.createNode("shin").setTranslation([0, 1, 0]).setScale([1, -1, 1]);
    mirror.addChild(j0);
    j0.addChild(j1);
    j1.addChild(j2);
    const skin = skinFor(doc, acc, [j0, j1, j2], j0);
    const hs = [0.2, 1.7, 2.6];
    const t = tube(10, 6, 0, 3, (y) => 0.25 + 0.05 * y);
    const n = t.pos.length / 3;
    const J = new Uint16Array(4 * n), W = new Float32Array(4 * n);
    for (let v = 0; v < n; v++) chainWeights(t.ys[v], hs).forEach(([j, x], k) => { J[4 * v + k] = j; W[4 * v + k] = x; });
    const prim = doc.createPrimitive()
        .setAttribute("POSITION", acc("VEC3", new Float32Array(t.pos)))
        .setAttribute("NORMAL", acc("VEC3", new Float32Array(t.nrm)))
        .setAttribute("JOINTS_0", acc("VEC4", J))
        .setAttribute("WEIGHTS_0", acc("VEC4", W))
        .setIndices(acc("SCALAR", new Uint16Array(t.idx)));
    const mesh = doc.createMesh("leg").addPrimitive(prim);
    // The skinned node's own transform (negative scale) is ignored by the glTF rules.
    const body = doc.createNode("leg").setMesh(mesh).setSkin(skin).setScale([1, 1, -2]).setTranslation([3, 0, 0]);
    mirror.addChild(body);
    scene.addChild(mirror);
    const anim = doc.createAnimation("flex");
    const ts = [0, 0.3, 0.6, 1.2];
    const add = (node, path, type, values) => {
        const s = doc.createAnimationSampler().setInput(acc("SCALAR", new Float32Array(ts)))
            .setOutput(acc(type, new Float32Array(values))).setInterpolation("LINEAR");
        anim.addSampler(s).addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(s));
    };
    add(j1, "scale", "VEC3", [1, 1, 1, 1.4, 0.6, 1, -0.5, 1, 1.2, 0.8, -1.3, 0.9]);
    add(j1, "rotation", "VEC4", ts.flatMap((x) => quatAxis(0.2, 0, 1, 0.3 + x)));
    add(j2, "rotation", "VEC4", ts.flatMap((x) => quatAxis(1, 0, 0, -1.1 * x)));
    return doc;
}

/**
 * Bad or odd input on a 2-joint tube (tests/data/mesh_bad/NAME.glb), to pin down what
 * Babylon does with it (conformance_mesh.mjs: skinnerd must either refuse the upload with a
 * 4xx naming a JSON pointer, or answer Babylon's numbers):
 *  joint_past_end: a joint index 3 (2 joints; Babylon reads past its matrices: NaN);
 *  joint_identity: a joint index 2 == joint count (Babylon reads its trailing identity);
 *  nan_position: a NaN in POSITION; weights_half: weights summing to 0.5;
 *  weights_negative: a negative weight beside a positive one (Babylon skips weights <= 0);
 *  weights_zero: a vertex whose weights are all 0 (Babylon: 1/0, NaN);
 *  targets_mismatch: two primitives with 1 and 2 morph targets (Babylon's loader throws);
 *  no_skin_attrs: a second primitive without JOINTS_0/WEIGHTS_0 on the skinned node.
 */
function badVariant(name) {
    const { doc, acc } = newDoc(`mesh_bad/${name}`);
    const scene = doc.createScene("scene");
    const j0 = doc.createNode("a");
    const j1 = doc.createNode("b").setTranslation([0, 1, 0]);
    j0.addChild(j1);
    const skin = skinFor(doc, acc, [j0, j1], j0);
    const mesh = doc.createMesh("tube");
    const prims = name === "targets_mismatch" || name === "no_skin_attrs" ? 2 : 1;
    for (let p = 0; p < prims; p++) {
        const t = tube(4, 4, p, p + 1, () => 0.2);
        const n = t.pos.length / 3;
        const J = new Uint16Array(4 * n), W = new Float32Array(4 * n);
        for (let v = 0; v < n; v++) chainWeights(t.ys[v], [0, 1]).forEach(([j, x], k) => { J[4 * v + k] = j; W[4 * v + k] = x; });
        if (name === "joint_past_end") { J[4 * 5] = 3; W[4 * 5] = 1; W[4 * 5 + 1] = 0; }
        if (name === "joint_identity") { J[4 * 5] = 2; W[4 * 5] = 0.5; J[4 * 5 + 1] = 1; W[4 * 5 + 1] = 0.5; }
        if (name === "nan_position") t.pos[3 * 6 + 1] = NaN;
        if (name === "weights_half") for (let i = 0; i < W.length; i++) W[i] *= 0.5;
        if (name === "weights_negative") { J[4 * 5 + 2] = 1; W[4 * 5 + 2] = -0.25; }
        if (name === "weights_zero") W.fill(0, 4 * 5, 4 * 6);
        const prim = doc.createPrimitive()
            .setAttribute("POSITION", acc("VEC3", new Float32Array(t.pos)))
            .setAttribute("NORMAL", acc("VEC3", new Float32Array(t.nrm)))
            .setIndices(acc("SCALAR", new Uint16Array(t.idx)));
        if (!(name === "no_skin_attrs" && p === 1)) prim.setAttribute("JOINTS_0", acc("VEC4", J)).setAttribute("WEIGHTS_0", acc("VEC4", W));
        if (name === "targets_mismatch")
            for (let k = 0; k <= p; k++) prim.addTarget(doc.createPrimitiveTarget(`t${k}`).setAttribute("POSITION", acc("VEC3", new Float32Array(t.pos.map((x) => 0.1 * x)))));
        mesh.addPrimitive(prim);
    }
    const body = doc.createNode("tube").setMesh(mesh).setSkin(skin);
    scene.addChild(j0).addChild(body);
    const anim = doc.createAnimation("sway");
    const s = doc.createAnimationSampler().setInput(acc("SCALAR", new Float32Array([0, 1])))
        .setOutput(acc("VEC4", new Float32Array([...quatAxis(0, 0, 1, 0), ...quatAxis(0, 0, 1, 0.7)]))).setInterpolation("LINEAR");
    anim.addSampler(s).addChannel(doc.createAnimationChannel().setTargetNode(j1).setTargetPath("rotation").setSampler(s));
    return doc;
}
export const BAD = ["joint_past_end", "joint_identity", "nan_position", "weights_half", "weights_negative", "weights_zero",
    "targets_mismatch", "no_skin_attrs"];

const io = new NodeIO();
mkdirSync(new URL("mesh_bad/", OUT), { recursive: true });
for (const name of BAD) {
    const bytes = await io.writeBinary(badVariant(name));
    writeFileSync(new URL(`mesh_bad/${name}.glb`, OUT), bytes);
    console.error(`make_mesh_assets: tests/data/mesh_bad/${name}.glb, ${bytes.length} bytes`);
}
for (const [name, make] of [["skin_morph", skinMorph], ["skin_8inf", skin8], ["skin_mirror", skinMirror]]) {
    const bytes = await io.writeBinary(make());
    writeFileSync(new URL(`${name}.glb`, OUT), bytes);
    console.error(`make_mesh_assets: tests/data/${name}.glb, ${bytes.length} bytes`);
}
