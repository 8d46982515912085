#!/usr/bin/env node
// Writes the small hand-made glTF files of tests/data/gltf/, each for one
// case Babylon's loader handles specially. Run from anywhere:
//   node tests/data/gltf/make_cases.mjs
// Then regenerate Babylon's answers: node tests/oracle/babylon_gltf.mjs
// --regenerate (writes tests/gltf/expected/). The files are deterministic.

import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

// ---- column-major 4x4 (glTF order) ------------------------------------------
function compose(t = [0, 0, 0], q = [0, 0, 0, 1], s = [1, 1, 1]) {
    const [x, y, z, w] = q;
    const xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
    return [
        (1 - 2 * (yy + zz)) * s[0], 2 * (xy + wz) * s[0], 2 * (xz - wy) * s[0], 0,
        2 * (xy - wz) * s[1], (1 - 2 * (xx + zz)) * s[1], 2 * (yz + wx) * s[1], 0,
        2 * (xz + wy) * s[2], 2 * (yz - wx) * s[2], (1 - 2 * (xx + yy)) * s[2], 0,
        t[0], t[1], t[2], 1,
    ];
}
// a then b in glTF column-vector terms: world = parent * local  -> mul(parent, local)
function mul(a, b) {
    const r = new Array(16).fill(0);
    for (let c = 0; c < 4; c++) for (let rr = 0; rr < 4; rr++) for (let k = 0; k < 4; k++) r[c * 4 + rr] += a[k * 4 + rr] * b[c * 4 + k];
    return r;
}
function invert(m) {
    const a = [];
    for (let r = 0; r < 4; r++) a.push([m[r], m[4 + r], m[8 + r], m[12 + r], r === 0 ? 1 : 0, r === 1 ? 1 : 0, r === 2 ? 1 : 0, r === 3 ? 1 : 0]);
    for (let c = 0; c < 4; c++) {
        let p = c;
        for (let r = c + 1; r < 4; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
        [a[c], a[p]] = [a[p], a[c]];
        const d = a[c][c];
        for (let k = 0; k < 8; k++) a[c][k] /= d;
        for (let r = 0; r < 4; r++) if (r !== c) { const f = a[r][c]; for (let k = 0; k < 8; k++) a[r][k] -= f * a[c][k]; }
    }
    const out = new Array(16);
    for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) out[c * 4 + r] = a[r][4 + c];
    return out;
}
const axisAngle = (ax, deg) => {
    const h = (deg * Math.PI) / 360, n = Math.hypot(...ax);
    return [(ax[0] / n) * Math.sin(h), (ax[1] / n) * Math.sin(h), (ax[2] / n) * Math.sin(h), Math.cos(h)];
};

// ---- a tiny glTF writer --------------------------------------------------------
class Doc {
    constructor() {
        this.json = { asset: { version: "2.0", generator: "skinnerd tests/data/gltf/make_cases.mjs" }, scene: 0, scenes: [{ nodes: [] }], nodes: [], meshes: [], skins: [], animations: [], accessors: [], bufferViews: [], buffers: [] };
        this.bytes = [];
    }
    view(u8, stride) {
        while (this.bytes.length % 4) this.bytes.push(0);
        const bv = { buffer: 0, byteOffset: this.bytes.length, byteLength: u8.length };
        if (stride) bv.byteStride = stride;
        for (const b of u8) this.bytes.push(b);
        this.json.bufferViews.push(bv);
        return this.json.bufferViews.length - 1;
    }
    floats(values, type, extra = {}) {
        const u8 = new Uint8Array(new Float32Array(values.flat()).buffer);
        const n = { SCALAR: 1, VEC3: 3, VEC4: 4, MAT4: 16 }[type];
        const acc = { bufferView: this.view(u8), componentType: 5126, count: values.flat().length / n, type, ...extra };
        if (type === "SCALAR") { acc.min = [Math.min(...values)]; acc.max = [Math.max(...values)]; }
        this.json.accessors.push(acc);
        return this.json.accessors.length - 1;
    }
    raw(u8, acc, stride) {
        this.json.accessors.push({ bufferView: this.view(u8, stride), ...acc });
        return this.json.accessors.length - 1;
    }
    node(n, parent) {
        this.json.nodes.push(n);
        const i = this.json.nodes.length - 1;
        if (parent === undefined) this.json.scenes[0].nodes.push(i);
        else (this.json.nodes[parent].children ??= []).push(i);
        return i;
    }
    // A triangle skinned to the given joint slots, on a new mesh node.
    skinnedMesh(skin, parent, nodeExtra = {}) {
        const pos = this.floats([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "VEC3", { min: [0, 0, 0], max: [1, 1, 0] });
        const joints = this.raw(new Uint8Array([0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0]), { componentType: 5121, count: 3, type: "VEC4" });
        const weights = this.floats([[0.5, 0.5, 0, 0], [1, 0, 0, 0], [0.25, 0.75, 0, 0]], "VEC4");
        this.json.meshes.push({ primitives: [{ attributes: { POSITION: pos, JOINTS_0: joints, WEIGHTS_0: weights } }] });
        return this.node({ name: `mesh${skin}`, mesh: this.json.meshes.length - 1, skin, ...nodeExtra }, parent);
    }
    // World matrices of the nodes in their rest pose (node matrix or TRS).
    world(i) {
        const n = this.json.nodes[i];
        const local = n.matrix ?? compose(n.translation, n.rotation, n.scale);
        const p = this.json.nodes.findIndex((x) => x.children?.includes(i));
        return p < 0 ? local : mul(this.world(p), local);
    }
    ibms(joints) { return this.floats(joints.map((j) => invert(this.world(j))), "MAT4"); }
    channel(anim, node, path, times, values, interpolation = "LINEAR") {
        const a = this.json.animations[anim];
        a.samplers.push({ input: this.floats(times, "SCALAR"), output: this.floats(values, path === "rotation" ? "VEC4" : "VEC3"), interpolation });
        a.channels.push({ sampler: a.samplers.length - 1, target: { node, path } });
    }
    write(name) {
        while (this.bytes.length % 4) this.bytes.push(0);
        this.json.buffers.push({ byteLength: this.bytes.length, uri: `data:application/octet-stream;base64,${Buffer.from(this.bytes).toString("base64")}` });
        for (const k of ["skins", "animations", "meshes"]) if (this.json[k].length === 0) delete this.json[k];
        writeFileSync(join(here, name), JSON.stringify(this.json, null, 1) + "\n");
    }
}

const q = axisAngle;

// no_ibm: a skin without inverseBindMatrices (identity binds), joints listed
// child first, unnamed nodes ("joint<i>") and an unnamed animation.
{
    const d = new Doc();
    const r = d.node({ translation: [0, 1, 0] });
    const a = d.node({ translation: [0, 1, 0], rotation: q([0, 0, 1], 30) }, r);
    const b = d.node({ translation: [0, 1.5, 0], scale: [1, 2, 1] }, a);
    d.json.skins.push({ joints: [b, a, r] });
    d.skinnedMesh(0);
    d.json.animations.push({ channels: [], samplers: [] });
    d.channel(0, a, "rotation", [0, 1, 2], [q([0, 0, 1], 30), q([0, 0, 1], 120), q([1, 0, 0], -60)]);
    d.channel(0, r, "translation", [0, 2], [[0, 1, 0], [2, 1, -1]]);
    d.write("no_ibm.gltf");
}

// nonjoint_between: skin.skeleton is a non-joint node, and another non-joint
// node sits between two joints; both become bones with index -1 (the middle
// one animated).
{
    const d = new Doc();
    const arm = d.node({ name: "Armature", translation: [0.5, 0, 0], rotation: q([0, 1, 0], 45) });
    const hip = d.node({ name: "hip", translation: [0, 1, 0] }, arm);
    const mid = d.node({ name: "offset", translation: [0, 0.5, 0.25], rotation: q([1, 0, 0], 20) }, hip);
    const hand = d.node({ name: "hand", translation: [0, 1, 0] }, mid);
    d.json.skins.push({ joints: [hip, hand], skeleton: arm, inverseBindMatrices: d.ibms([hip, hand]) });
    d.skinnedMesh(0, arm);
    d.json.animations.push({ name: "wave", channels: [], samplers: [] });
    d.channel(0, mid, "rotation", [0, 0.5, 1], [q([1, 0, 0], 20), q([1, 0, 0], 80), q([0, 0, 1], 45)]);
    d.channel(0, hand, "scale", [0, 1], [[1, 1, 1], [1.5, 0.5, 1]]);
    d.write("nonjoint_between.gltf");
}

// above_root: transforms on nodes above the skeleton root (a Z-up matrix
// node and a scaled "Rig" node); the IBMs include them, as exporters write.
{
    const d = new Doc();
    const zup = d.node({ name: "Z_UP", matrix: [1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1] });
    const rig = d.node({ name: "Rig", translation: [1, 2, 3], scale: [0.5, 0.5, 0.5], rotation: q([0, 0, 1], 10) }, zup);
    const root = d.node({ name: "root", translation: [0, 0, 1] }, rig);
    const tip = d.node({ name: "tip", translation: [0, 2, 0], rotation: q([0, 1, 0], 90) }, root);
    d.json.skins.push({ joints: [root, tip], skeleton: root, inverseBindMatrices: d.ibms([root, tip]) });
    d.skinnedMesh(0, zup);
    d.json.animations.push({ name: "bend", channels: [], samplers: [] });
    d.channel(0, tip, "rotation", [0, 1], [q([0, 1, 0], 90), q([1, 0, 0], 90)]);
    d.channel(0, root, "translation", [0, 1], [[0, 0, 1], [0, 1, 1]]);
    d.write("above_root.gltf");
}

// mesh_transform: the skinned mesh node has its own transform and sits
// under a transformed parent; both are ignored (no skin.skeleton: the
// joints' nearest common ancestor is the root).
{
    const d = new Doc();
    const holder = d.node({ name: "holder", translation: [5, 0, 0], rotation: q([0, 1, 0], 30) });
    const root = d.node({ name: "root", translation: [0, 1, 0], rotation: q([0, 0, 1], -15) });
    const tip = d.node({ name: "tip", translation: [0, 1, 0] }, root);
    d.json.skins.push({ joints: [root, tip], inverseBindMatrices: d.ibms([root, tip]) });
    d.skinnedMesh(0, holder, { translation: [0, 0, 3], scale: [2, 2, 2], rotation: q([1, 0, 0], 40) });
    d.json.animations.push({ name: "nod", channels: [], samplers: [] });
    d.channel(0, tip, "rotation", [0, 0.25, 0.75], [[0, 0, 0, 1], q([0, 0, 1], 45), q([0, 0, 1], -45)]);
    d.write("mesh_transform.gltf");
}

// cubic_step: CUBICSPLINE translation/rotation/scale starting after t=0
// (Babylon pads to frame 0 with the first key and its tangents), a STEP
// channel, and a LINEAR channel that ends before the clip does.
{
    const d = new Doc();
    const a = d.node({ name: "a", translation: [0, 0, 0] });
    const b = d.node({ name: "b", translation: [0, 1, 0] }, a);
    const c = d.node({ name: "c", translation: [0, 1, 0] }, b);
    d.json.skins.push({ joints: [a, b, c], inverseBindMatrices: d.ibms([a, b, c]) });
    d.skinnedMesh(0);
    d.json.animations.push({ name: "cubic", channels: [], samplers: [] });
    // CUBICSPLINE output: per key in-tangent, value, out-tangent.
    d.channel(0, a, "translation", [0.5, 1.25, 2],
        [[0, 0, 0], [0, 0, 0], [1, 0, 0], [-2, 1, 0], [1, 1, 0], [0.5, -1, 2], [0, 0, 1], [2, 0, 0], [0, 0, 0]], "CUBICSPLINE");
    d.channel(0, b, "rotation", [0.5, 1.5, 2],
        [[0, 0, 0, 0], q([0, 0, 1], 10), [0, 0, 0.5, 0], [0.1, 0, 0, 0], q([1, 0, 0], 70), [0, 0.3, 0, 0], [0, 0, 0, 0], q([0, 1, 0], 40), [0.2, 0, 0, 0]], "CUBICSPLINE");
    d.channel(0, c, "scale", [0, 1, 2],
        [[0, 0, 0], [1, 1, 1], [1, 0, 0], [0, 1, 0], [2, 1, 0.5], [0, 0, 0], [0, 0, 0], [1, 1, 1], [0, 0, 0]], "CUBICSPLINE");
    d.json.animations.push({ name: "step", channels: [], samplers: [] });
    d.channel(1, b, "rotation", [0, 0.5, 1, 1.5], [[0, 0, 0, 1], q([0, 0, 1], 30), q([0, 0, 1], 60), q([0, 0, 1], 90)], "STEP");
    d.channel(1, c, "translation", [0.25, 0.75], [[0, 1, 0], [1, 1, 1]]);
    d.channel(1, a, "scale", [0, 2], [[1, 1, 1], [0.5, 2, 1]], "STEP");
    d.write("cubic_step.gltf");
}

// scales: non-uniform and negative scales, a joint given by a matrix with a
// negative determinant, and an animated negative scale.
{
    const d = new Doc();
    const a = d.node({ name: "a", scale: [1, 2, 0.5], rotation: q([1, 1, 0], 25) });
    const m = mul(compose([0, 1, 0], q([0, 0, 1], 20)), compose([0, 0, 0], [0, 0, 0, 1], [-1, 1.5, 1]));
    const b = d.node({ name: "b", matrix: m }, a);
    const c = d.node({ name: "c", translation: [0, 1, 0], scale: [-1, -1, 1] }, b);
    d.json.skins.push({ joints: [a, b, c], inverseBindMatrices: d.ibms([a, b, c]) });
    d.skinnedMesh(0);
    d.json.animations.push({ name: "squash", channels: [], samplers: [] });
    d.channel(0, b, "scale", [0, 1], [[1, 1, 1], [-2, 1, 0.5]]);
    d.channel(0, c, "rotation", [0, 1], [[0, 0, 0, 1], q([0, 1, 1], 135)]);
    d.write("scales.gltf");
}

// accessors: a normalized SHORT rotation output read through a byteStride,
// a sparse translation output, and two skins sharing joints (skin 1 uses a
// subset, in another order, with its own IBMs).
{
    const d = new Doc();
    const a = d.node({ name: "a", translation: [0, 0, 0] });
    const b = d.node({ name: "b", translation: [0, 1, 0] }, a);
    const c = d.node({ name: "c", translation: [0, 1, 0] }, b);
    d.json.skins.push({ joints: [a, b, c], inverseBindMatrices: d.ibms([a, b, c]) });
    d.json.skins.push({ name: "upper", joints: [c, b], inverseBindMatrices: d.floats([invert(d.world(c)), compose([0, -0.5, 0])], "MAT4") });
    d.skinnedMesh(0);
    d.skinnedMesh(1);
    d.json.animations.push({ name: "packed", channels: [], samplers: [] });
    const anim = d.json.animations[0];
    const rot = [[0, 0, 0, 1], q([0, 0, 1], 50), q([1, 0, 0], -80)];
    const s16 = new Int16Array(rot.length * 6); // stride 12 bytes: 4 shorts + 2 padding
    rot.forEach((r, i) => r.forEach((v, k) => (s16[i * 6 + k] = Math.round(v * 32767))));
    const routput = d.raw(new Uint8Array(s16.buffer), { componentType: 5122, normalized: true, count: 3, type: "VEC4" }, 12);
    anim.samplers.push({ input: d.floats([0, 1, 2], "SCALAR"), output: routput });
    anim.channels.push({ sampler: 0, target: { node: b, path: "rotation" } });
    const base = d.floats([[0, 1, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0]], "VEC3");
    d.json.accessors[base].sparse = {
        count: 2,
        indices: { bufferView: d.view(new Uint8Array([1, 3, 0, 0])), componentType: 5121 },
        values: { bufferView: d.view(new Uint8Array(new Float32Array([0.5, 1, 0, -0.5, 2, 0.25]).buffer)) },
    };
    anim.samplers.push({ input: d.floats([0, 0.5, 1, 1.5], "SCALAR"), output: base });
    anim.channels.push({ sampler: 1, target: { node: c, path: "translation" } });
    d.write("accessors.gltf");
}
