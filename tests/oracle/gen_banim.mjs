#!/usr/bin/env node
// Generates `skinner eval` cases whose skeletons are Babylon's own format
// WITH animations: real Babylon Skeleton/Bone/Animation objects are built,
// given keys and ranges (createAnimationRange) and written with
// JSON.stringify(skeleton.serialize()) - matrices and matrix keys as the
// {"0": .., "15": ..} objects that text really holds. The poses name ranges
// ("animation" + "time" | "times" | "from"/"to"/"fps", "loop", "bones").
// babylon_eval.mjs --jsonl then plays them with beginAnimation + goToFrame.
//
//   node gen_banim.mjs --seed 1414 --count 200 --retarget 60 | node babylon_eval.mjs --jsonl - ../conformance/anim.jsonl
//
// Deterministic: mulberry32, no Math.random; same seed, same bytes.
//
// Covered: "_matrix" (dataType 3, held), "position"/"scaling" (Vector3:
// lerp; Hermite with in/out tangents), "rotationQuaternion" (slerp; Hermite
// + normalize through the flat [q, in, out] key values Animation.Parse
// reads), per-key STEP (interpolation 1), first keys after frame 0 (the key
// RuntimeAnimation inserts), repeated frames, loop modes 0/1/2/4, ranges and
// no ranges ("animation0"), fractional frames, times before/after a range,
// loop, user bone overrides on top of a clip, bones no clip drives.

import { mulberry32 } from "./gen_common.mjs";

console.log = (...args) => console.error(...args);
const B = await import("@babylonjs/core");
const { NullEngine, Scene, Skeleton, Bone, Matrix, Vector3, Quaternion, Animation } = B;

const args = process.argv.slice(2);
const opt = (k, d) => {
    const i = args.indexOf(k);
    return i >= 0 ? Number(args[i + 1]) : d;
};
const seed = opt("--seed", 1414);
const count = opt("--count", 200);
let rnd = mulberry32(seed);
const U = (a, b) => a + (b - a) * rnd();
const I = (a, b) => Math.floor(U(a, b + 1));
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const r4 = (x) => Math.round(x * 1e4) / 1e4;

const engine = new NullEngine();
const scene = new Scene(engine);

function randQuat() {
    const q = new Quaternion(U(-1, 1), U(-1, 1), U(-1, 1), U(-1, 1));
    q.normalize();
    return q;
}
const randVec = (a, b) => new Vector3(r4(U(a, b)), r4(U(a, b)), r4(U(a, b)));
function randMatrix() {
    const s = rnd() < 0.5 ? new Vector3(1, 1, 1) : randVec(0.6, 1.5);
    return Matrix.Compose(s, randQuat(), randVec(-2, 2));
}

function keyFrames(n, desc) {
    const frames = [];
    let f = rnd() < 0.3 ? I(1, 10) : 0;
    if (f > 0) desc.add("first key after 0");
    for (let k = 0; k < n; k++) {
        frames.push(f);
        const r = rnd();
        if (r < 0.08 && k > 0) {
            desc.add("repeated frame");
        } else if (r < 0.25) {
            f += r4(U(0.5, 7));
            desc.add("fractional key frame");
        } else f += I(1, 12);
    }
    return frames;
}

/** One Animation on `bone`; returns a function that rewrites its serialized keys (flat quaternion tangents). */
function animate(bone, fps, desc) {
    const kind = pick(["_matrix", "_matrix", "position", "rotationQuaternion", "rotationQuaternion", "scaling"]);
    const type = kind === "_matrix" ? Animation.ANIMATIONTYPE_MATRIX : kind === "rotationQuaternion" ? Animation.ANIMATIONTYPE_QUATERNION : Animation.ANIMATIONTYPE_VECTOR3;
    const loop = pick([1, 1, 0, 2, 4]);
    const anim = new Animation(`${bone.name}_${kind}`, kind, fps, type, loop);
    desc.add(kind === "_matrix" ? "matrix keys" : `${kind} keys`);
    if (loop !== 1) desc.add(`loop mode ${loop}`);
    const frames = keyFrames(I(1, 6), desc);
    const tangents = kind !== "_matrix" && rnd() < 0.35;
    const flatQuat = [];
    const keys = frames.map((frame, k) => {
        const key = { frame };
        if (kind === "_matrix") key.value = randMatrix();
        else if (kind === "rotationQuaternion") key.value = randQuat();
        else if (kind === "position") key.value = randVec(-2, 2);
        else key.value = randVec(0.5, 1.6);
        if (tangents) {
            const t = () => (kind === "rotationQuaternion" ? new Quaternion(U(-0.3, 0.3), U(-0.3, 0.3), U(-0.3, 0.3), U(-0.3, 0.3)) : randVec(-0.5, 0.5));
            key.inTangent = t();
            key.outTangent = t();
            desc.add(kind === "rotationQuaternion" ? "quaternion Hermite" : "vector Hermite");
        }
        if (kind !== "_matrix" && rnd() < 0.15) {
            key.interpolation = 1;
            desc.add("STEP key");
        }
        if (kind === "rotationQuaternion" && (tangents || key.interpolation !== undefined)) flatQuat[k] = key;
        return key;
    });
    anim.setKeys(keys);
    bone.animations.push(anim);
    // serialize() nests quaternion tangents, which Parse ignores; the flat
    // layout Parse reads is what tools (and this test) give it.
    return (ser) => {
        if (kind !== "rotationQuaternion") return;
        ser.keys.forEach((sk, k) => {
            const key = flatQuat[k];
            if (!key) return;
            if (key.inTangent) {
                sk.values = [...key.value.asArray(), ...key.inTangent.asArray(), ...key.outTangent.asArray()];
                if (key.interpolation !== undefined) sk.values.push(key.interpolation);
            } else sk.values = [...key.value.asArray(), 0, 0, 0, 0, 0, 0, 0, 0, key.interpolation];
        });
    };
}

const RANGE_NAMES = ["Walk", "Run", "idle", "jump_2", "Take 001"];

function makeCase(idx) {
    const desc = new Set();
    const sk = new Skeleton("gen", "gen", scene);
    const n = I(2, 6);
    const bones = [];
    const fps = pick([30, 60, 24, 25]);
    const fixes = [];
    for (let i = 0; i < n; i++) {
        const parent = i === 0 || rnd() < 0.15 ? null : bones[I(0, i - 1)];
        const b = new Bone(`b${i}`, sk, parent, randMatrix());
        bones.push(b);
        if (rnd() < 0.8 || i === 0) fixes.push(animate(b, i === 0 || rnd() < 0.8 ? fps : pick([30, 60]), desc));
    }
    if (bones.some((b) => b.animations.length === 0)) desc.add("bone without animation");
    let last = 0;
    for (const b of bones) for (const a of b.animations) last = Math.max(last, a.getKeys()[a.getKeys().length - 1].frame);
    const nr = pick([0, 1, 2, 2, 3]);
    const ranges = [];
    for (let r = 0; r < nr; r++) {
        const from = rnd() < 0.3 ? 0 : r4(U(0, last));
        const to = rnd() < 0.2 ? from : r4(U(from, last + 5));
        const name = RANGE_NAMES[r];
        sk.createAnimationRange(name, from, to);
        ranges.push({ name, from, to });
    }
    if (nr === 0) desc.add("no ranges");
    const ser = JSON.parse(JSON.stringify(sk.serialize()));
    let fi = 0;
    for (const b of ser.bones) if (b.animation) fixes[fi++](b.animation);
    sk.dispose();

    const ops = [];
    const clipNames = nr === 0 ? ["animation0"] : ranges.map((r) => r.name);
    const nops = I(1, 4);
    for (let k = 0; k < nops; k++) {
        const name = pick(clipNames);
        const r = nr === 0 ? { from: 0, to: last } : ranges.find((x) => x.name === name);
        const dur = (r.to - r.from) / fps;
        const op = { op: "pose", animation: name };
        const mode = rnd();
        if (mode < 0.45) {
            op.time = r4(U(-0.05, dur + 0.1));
        } else if (mode < 0.6) {
            op.time = r4(U(dur, 3 * dur + 0.2));
            op.loop = true;
            desc.add("loop");
        } else if (mode < 0.75) {
            op.times = [0, r4(dur / 2), r4(dur), r4(U(0, dur))];
            desc.add("times");
        } else {
            op.from = 0;
            op.to = r4(Math.max(dur, 0.05));
            op.fps = pick([10, 30]);
            desc.add("frame range");
        }
        if (rnd() < 0.2) {
            const b = `b${I(0, n - 1)}`;
            op.bones = { [b]: rnd() < 0.5 ? { position: [r4(U(-1, 1)), r4(U(-1, 1)), r4(U(-1, 1))] } : { rotationQuaternion: randQuat().asArray().map(r4) } };
            desc.add("bone override on a clip");
        }
        if (rnd() < 0.3) {
            op.output = ["final", "local"];
            desc.add("local output");
        }
        if (rnd() < 0.1 && nr > 0) {
            op.animation = ranges.findIndex((x) => x.name === name);
            desc.add("clip by index");
        }
        ops.push(op);
    }
    if (rnd() < 0.15) {
        ops.splice(0, 0, { op: "set", bones: { b0: { scaling: [1.1, 0.9, 1.2] } } });
        desc.add("set before the clip");
    }
    const name = `banim${seed}-${idx} ${[...desc].sort().join(", ")}`;
    return { name, case: { skeleton: ser, ops } };
}

/**
 * copyAnimationRange: a source rig with "_matrix" animations and ranges, a
 * target rig with the same bone names (other matrices, lengths, maybe its
 * own matrix animations and ranges, maybe dimensionsAtRest), the range
 * copied with or without rescaleAsRequired, then poses on the new range
 * (and on an old one). Drawn from a second stream (seed + 1) after the
 * plain cases, so adding these kept the plain cases byte-identical.
 */
function makeRetargetCase(idx) {
    const desc = new Set(["copyAnimationRange"]);
    const n = I(2, 5);
    const fps = pick([30, 60]);
    const parents = [];
    for (let i = 0; i < n; i++) parents.push(i === 0 ? -1 : rnd() < 0.1 ? -1 : I(0, i - 1));
    const build = (withAnims, rangeNames) => {
        const sk = new Skeleton("rig", "rig", scene);
        const bones = [];
        // Exporters key every bone on the same frames; a range then holds a
        // key of every bone (a bone left with no key would crash Babylon).
        const frames = [0];
        for (let k = 1; k < I(2, 6); k++) frames.push(frames[k - 1] + I(1, 8));
        for (let i = 0; i < n; i++) {
            const b = new Bone(`j${i}`, sk, parents[i] < 0 ? null : bones[parents[i]], randMatrix());
            b.length = r4(U(0.3, 2)); // a parent without one: Babylon writes NaN, skinnerd refuses (check_sk_banim)
            bones.push(b);
            if (withAnims === true || (withAnims === "some" && rnd() < 0.5)) {
                const a = new Animation(`j${i}_m`, "_matrix", fps, Animation.ANIMATIONTYPE_MATRIX, 1);
                a.setKeys(frames.map((frame) => ({ frame, value: randMatrix() })));
                b.animations.push(a);
            }
        }
        let last = 0;
        for (const b of bones) for (const a of b.animations) last = Math.max(last, a.getHighestFrame());
        for (const name of rangeNames) {
            const from = rnd() < 0.4 ? 0 : pick(frames);
            sk.createAnimationRange(name, from, rnd() < 0.7 ? frames[frames.length - 1] : from + I(0, 3));
        }
        if (rnd() < 0.5) {
            sk.dimensionsAtRest = randVec(0.5, 3);
            desc.add("dimensionsAtRest");
        }
        const ser = JSON.parse(JSON.stringify(sk.serialize()));
        sk.dispose();
        return ser;
    };
    const src = build(true, rnd() < 0.5 ? ["Walk"] : ["Walk", "Run"]);
    const own = rnd() < 0.5 ? "some" : false;
    const dst = build(own, own ? ["Idle"] : []);
    if (own) desc.add("target has its own animations");
    const rescale = rnd() < 0.7;
    if (rescale) desc.add("rescale");
    const name = pick(src.ranges.map((r) => r.name));
    const ops = [{ op: "copyAnimationRange", from: src, name, rescale }];
    const sr = src.ranges.find((r) => r.name === name);
    const dur = (sr.to - sr.from) / fps;
    ops.push({ op: "pose", animation: name, times: [0, r4(dur / 3), r4(dur), r4(U(0, dur))], output: ["final", "local"] });
    if (own && rnd() < 0.5) {
        ops.push({ op: "pose", animation: "Idle", time: r4(U(0, 0.2)) });
        desc.add("old range after the copy");
    }
    return { name: `banim${seed}-retarget-${idx} ${[...desc].sort().join(", ")}`, case: { skeleton: dst, ops } };
}

const lines = [];
for (let i = 0; i < count; i++) lines.push(JSON.stringify(makeCase(i)));
const retarget = opt("--retarget", 0);
if (retarget > 0) {
    const r2 = mulberry32(seed + 1);
    rnd = r2;
    for (let i = 0; i < retarget; i++) lines.push(JSON.stringify(makeRetargetCase(i)));
}
process.stdout.write(lines.join("\n") + "\n");
