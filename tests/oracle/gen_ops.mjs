#!/usr/bin/env node
// Seeded random generator of `skinner eval` cases for Babylon's Bone API
// (issue 13): world-space setters, read-backs, meshes, world/positions outputs.
//
//   node gen_ops.mjs --seed S --count N [--named] [--mirror 1]
//
// Prints N cases as JSON Lines (with --named: {"name": "ops<S>-<k> ...", "case"}),
// for babylon_eval.mjs --jsonl. Same seed, same output (mulberry32, no
// Math.random). Every case is run through the Babylon oracle while it is
// drawn; a case whose numbers are not all finite and below MAX_ABS is drawn
// again (continuing the same stream, so this stays deterministic).
//
// Covered: every setter in both spaces, with no mesh, the case's default mesh,
// an op's own mesh and "mesh": null; meshes with Euler or quaternion rotation,
// non-uniform and negative scaling, parent chains; skeletons with non-uniform
// and negative scales, binds that differ from the local (negative bind
// determinant: Babylon's _scalingDeterminant), a second root (Babylon's lazy
// absolute matrices only refresh bones[0]'s subtree); ops in sequence, ops
// after "set" TRS overrides (what a clip sample is), ops inside a pose,
// setCurrentPoseAsRest then returnToRest, every query, and "ik" (one update()
// of a fresh BoneIKController) with every option, bone lengths or children,
// and "lookAt" (one update() of a fresh BoneLookController) with its options.

import { evalCase } from "./babylon_eval.mjs";
import { Gen, MAX_ABS, parseGenArgs, rnd, writeLines } from "./gen_common.mjs";

const B = await import("@babylonjs/core");
const { Matrix, Quaternion, Vector3 } = B;

const vec = (g, a = 2) => [rnd(g.range(-a, a)), rnd(g.range(-a, a)), rnd(g.range(-a, a))];
const angle = (g) => rnd(g.range(-Math.PI, Math.PI));
const euler = (g) => [angle(g), angle(g), angle(g)];

function nonZeroAxis(g) {
    for (;;) {
        const v = vec(g, 1);
        if (Math.hypot(...v) > 0.1) return v;
    }
}

function scaling(g, kind) {
    if (kind === "uniform") {
        const s = rnd(g.range(0.5, 1.8));
        return [s, s, s];
    }
    const s = [rnd(g.range(0.5, 1.8)), rnd(g.range(0.5, 1.8)), rnd(g.range(0.5, 1.8))];
    if (kind === "negative") s[g.int(0, 2)] *= -1;
    return s;
}

function quaternion(g) {
    const q = [g.range(-1, 1), g.range(-1, 1), g.range(-1, 1), g.range(-1, 1)];
    const n = Math.hypot(...q) || 1;
    const unit = g.chance(0.8);
    return q.map((x) => rnd(unit ? x / n : x));
}

function trsMatrix(g, sk) {
    const m = Matrix.Compose(
        new Vector3(...scaling(g, sk)),
        Quaternion.RotationYawPitchRoll(...euler(g)),
        new Vector3(...vec(g)),
    );
    return Array.from(m.m);
}

// --mirror 1: every mesh mirrored or non-uniform (one, two or three
// negative axes, uniform ones too), in parent chains up to four deep whose
// nodes are mirrored as well; a mesh on every case; world-space rotation
// setters, ik (with leaf bones of length 0) and lookAt drawn more often.
let MIRROR = false;

function mirroredScaling(g, kind) {
    if (kind === "negative-uniform") {
        const s = -rnd(g.range(0.5, 1.8));
        return [s, s, s];
    }
    const s = kind === "nonuniform" || g.chance(0.3) ? scaling(g, "nonuniform") : scaling(g, "uniform");
    const axes = kind === "negative1" ? 1 : kind === "negative2" ? 2 : kind === "negative3" ? 3 : 0;
    const first = g.int(0, 2);
    for (let i = 0; i < axes; i++) s[(first + i) % 3] *= -1;
    return s;
}

function meshSpec(g, depth = 0) {
    if (MIRROR) {
        const kind = g.pick(["nonuniform", "negative1", "negative1", "negative2", "negative3", "negative-uniform"]);
        const m = { position: vec(g, 3) };
        if (g.chance(0.5)) m.rotation = euler(g);
        else m.rotationQuaternion = quaternion(g);
        m.scaling = mirroredScaling(g, kind);
        if (depth < 3 && g.chance(0.5)) m.parent = meshSpec(g, depth + 1);
        return m;
    }
    const kind = g.pick(["plain", "nonuniform", "negative"]);
    const m = { position: vec(g, 3) };
    if (g.chance(0.5)) m.rotation = euler(g);
    else m.rotationQuaternion = quaternion(g);
    m.scaling = kind === "plain" ? scaling(g, "uniform") : scaling(g, kind === "negative" ? "negative" : "nonuniform");
    if (depth < 2 && g.chance(0.3)) m.parent = meshSpec(g, depth + 1);
    return m;
}

/** The tags of a mesh chain: how deep, and whether some node is mirrored. */
function meshTags(m, tags) {
    let depth = 0, mirrored = 0;
    for (let n = m; n; n = n.parent, depth++) mirrored += n.scaling.filter((x) => x < 0).length % 2;
    tags.add(`mesh chain ${depth}${mirrored ? " mirrored" : ""}`);
}

function skeletonSpec(g, tags) {
    const n = g.int(2, 7);
    const twoRoots = g.chance(0.1);
    const bones = [];
    for (let i = 0; i < n; i++) {
        const b = { name: `b${i}` };
        if (i > 0 && !(twoRoots && i === n - 1)) b.parent = `b${g.chance(0.6) ? i - 1 : g.int(0, i - 1)}`;
        b.position = vec(g);
        b.rotation = euler(g);
        const sk = g.pick(["uniform", "uniform", "nonuniform", "negative"]);
        if (sk !== "uniform") tags.add(`${sk} bone scale`);
        b.scaling = scaling(g, sk);
        if (g.chance(0.25)) {
            const bk = g.chance(0.4) ? "negative" : "nonuniform";
            b.bind = trsMatrix(g, bk);
            tags.add(`${bk} bind`);
        }
        if (g.chance(0.2)) b.length = rnd(g.range(0.3, 2));
        bones.push(b);
    }
    if (twoRoots) tags.add("two roots");
    return { bones };
}

const SPACED = ["translate", "setPosition", "setYawPitchRoll", "rotate", "setAxisAngle", "setRotation",
    "setRotationQuaternion", "setRotationMatrix"];
const QUERIES = ["position", "absolutePosition", "direction", "rotation", "rotationQuaternion", "rotationMatrix", "scale",
    "absolutePositionFromLocal", "localPositionFromAbsolute"];

/** An "ik" op on a bone that has a parent and children or a length, or null. */
function ikOp(g, skeleton, tags) {
    const bones = skeleton.bones;
    const byName = new Map(bones.map((b) => [b.name, b]));
    const ok = bones.filter((b) => b.parent && (bones.some((c) => c.parent === b.name) || b.length));
    // a leaf of length 0: Babylon's controller has not enough information and update() does nothing
    const leaves = MIRROR ? bones.filter((b) => b.parent && !b.length && !bones.some((c) => c.parent === b.name)) : [];
    if (leaves.length && g.chance(0.15)) {
        tags.add("ik leaf of length 0");
        return { op: "ik", bone: g.pick(leaves).name, target: vec(g, 3), poleTarget: vec(g, 3) };
    }
    if (!ok.length) return null;
    const b = g.pick(ok);
    const op = { op: "ik", bone: b.name, target: vec(g, 3) };
    if (MIRROR && g.chance(0.3)) {
        // the target as a mesh's world position (float32), not doubles
        delete op.target;
        op.targetMesh = meshSpec(g);
        tags.add("ik target mesh");
    }
    const grand = byName.get(b.parent).parent;
    const poles = grand ? ["default", "position", "bone"] : ["position", "bone"];
    const pole = g.pick(MIRROR ? [...poles, "mesh"] : poles);
    if (pole === "position") op.poleTarget = vec(g, 3);
    if (pole === "bone") op.poleTargetBone = g.pick(bones).name;
    if (pole === "mesh") op.poleTargetMesh = meshSpec(g);
    if (pole !== "position" && g.chance(0.6)) op.poleTargetLocalOffset = vec(g);
    if (g.chance(0.3)) op.poleAngle = angle(g);
    if (g.chance(0.3)) op.bendAxis = nonZeroAxis(g);
    if (g.chance(0.3)) op.maxAngle = rnd(g.range(0.5, 3.5));
    if (g.chance(0.3)) op.slerpAmount = rnd(g.range(0.1, 1));
    const m = g.r();
    if (m < 0.15) op.mesh = null;
    else if (m < 0.3) op.mesh = meshSpec(g);
    if (MIRROR && op.mesh) meshTags(op.mesh, tags);
    tags.add(`ik pole ${pole}`);
    return op;
}

/** A "lookAt" op with a random subset of BoneLookController's options. */
function lookOp(g, names, tags) {
    const op = { op: "lookAt", bone: g.pick(names), target: vec(g, 4) };
    if (g.chance(0.3)) op.upAxis = nonZeroAxis(g);
    if (g.chance(0.4)) op.upAxisSpace = g.pick(["local", "world", "bone"]);
    if (g.chance(0.2)) op.yawAxis = nonZeroAxis(g);
    if (g.chance(0.2)) op.pitchAxis = nonZeroAxis(g);
    if (g.chance(0.4)) {
        op.minYaw = rnd(g.range(-3, 0));
        op.maxYaw = rnd(g.range(0, 3));
    }
    if (g.chance(0.4)) {
        op.minPitch = rnd(g.range(-1.5, 0));
        op.maxPitch = rnd(g.range(0, 1.5));
    }
    if (g.chance(0.2)) op.adjustYaw = angle(g);
    if (g.chance(0.2)) op.adjustPitch = angle(g);
    if (g.chance(0.2)) op.adjustRoll = angle(g);
    if (g.chance(0.1)) op.slerpAmount = rnd(g.range(0.1, 1));
    if (g.chance(0.15)) op.useAbsoluteValueForYaw = true;
    const m = g.r();
    if (m < 0.15) op.mesh = null;
    else if (m < 0.3) op.mesh = meshSpec(g);
    tags.add(`lookAt${op.upAxisSpace ? ` up ${op.upAxisSpace}` : ""}${"minYaw" in op || "minPitch" in op ? " limited" : ""}`);
    return op;
}

const WORLD_ROTATIONS = ["setAxisAngle", "setYawPitchRoll", "setRotation", "setRotationQuaternion", "setRotationMatrix",
    "rotate"];

function boneOp(g, names, tags, inPose, skeleton) {
    if (g.chance(MIRROR ? 0.3 : 0.15)) {
        const ik = ikOp(g, skeleton, tags);
        if (ik) return ik;
    }
    if (g.chance(0.12)) return lookOp(g, names, tags);
    const bone = g.pick(names);
    const kind = MIRROR && g.chance(0.5) ? g.pick(WORLD_ROTATIONS)
        : g.pick([...SPACED, "setAbsolutePosition", "scale", "setScale", "query", "query", "query",
            ...(inPose ? [] : ["setCurrentPoseAsRest"])]);
    const op = { op: kind, bone };
    const space = g.chance(MIRROR ? 0.8 : 0.5) ? "world" : "local";
    switch (kind) {
        case "translate": op.vector = vec(g); break;
        case "setPosition":
        case "setAbsolutePosition": op.position = vec(g, 3); break;
        case "scale":
            op.scale = scaling(g, g.pick(["uniform", "nonuniform", "negative"]));
            if (g.chance(0.5)) op.scaleChildren = true;
            break;
        case "setScale": op.scale = scaling(g, g.pick(["uniform", "nonuniform", "negative"])); break;
        case "setYawPitchRoll": op.yaw = angle(g); op.pitch = angle(g); op.roll = angle(g); break;
        case "rotate": op.axis = nonZeroAxis(g); op.amount = angle(g); break;
        case "setAxisAngle": op.axis = nonZeroAxis(g); op.angle = angle(g); break;
        case "setRotation": op.rotation = euler(g); break;
        case "setRotationQuaternion": op.quaternion = quaternion(g); break;
        case "setRotationMatrix": op.matrix = Array.from(Matrix.RotationYawPitchRoll(...euler(g)).m); break;
        case "setCurrentPoseAsRest": if (g.chance(0.4)) delete op.bone; break;
        case "query": {
            op.get = g.pick(QUERIES);
            if (op.get === "direction") op.axis = nonZeroAxis(g);
            if (op.get.endsWith("FromLocal") || op.get.endsWith("FromAbsolute")) op.point = vec(g);
            break;
        }
    }
    const spaced = SPACED.includes(kind) || (kind === "query" && ["position", "rotation", "rotationQuaternion", "rotationMatrix"].includes(op.get));
    if (spaced) op.space = space;
    if (SPACED.includes(kind) || kind === "setAbsolutePosition" || kind === "query") {
        const m = g.r();
        if (m < 0.12) op.mesh = null;
        else if (m < 0.27) op.mesh = meshSpec(g);
        if ("mesh" in op) tags.add(op.mesh === null ? "mesh null" : "op mesh");
        if (MIRROR && op.mesh) meshTags(op.mesh, tags);
    }
    tags.add(kind === "query" ? `get ${op.get}` : `${kind}${spaced ? ` ${space}` : ""}`);
    return op;
}

function clipLikeSet(g, names) {
    const bones = {};
    for (const n of names) bones[n] = { position: vec(g), rotationQuaternion: quaternion(g), scaling: scaling(g, g.pick(["uniform", "nonuniform"])) };
    return bones;
}

function makeCase(g) {
    const tags = new Set();
    const skeleton = skeletonSpec(g, tags);
    const names = skeleton.bones.map((b) => b.name);
    const c = { skeleton };
    if (g.chance(MIRROR ? 1 : 0.6)) {
        c.mesh = meshSpec(g);
        tags.add("case mesh");
        if (MIRROR) meshTags(c.mesh, tags);
    }
    const ops = [];
    if (g.chance(0.3)) {
        ops.push({ op: "set", bones: clipLikeSet(g, names) });
        tags.add("after set TRS");
    }
    const n = g.int(2, 8);
    for (let i = 0; i < n; i++) {
        ops.push(boneOp(g, names, tags, false, skeleton));
        if (ops[ops.length - 1].op === "setCurrentPoseAsRest" && g.chance(0.5)) {
            ops.push({ op: "set", bones: clipLikeSet(g, names.slice(0, 1)) }, { op: "returnToRest" });
        }
        if (g.chance(0.15)) ops.push({ op: "evaluate", output: ["absolute"] });
    }
    if (g.chance(0.3)) {
        const pose = { op: "pose", bones: clipLikeSet(g, names), ops: [], output: ["final", "world", "positions"] };
        for (let i = g.int(1, 4); i > 0; i--) pose.ops.push(boneOp(g, names, tags, true, skeleton));
        if (g.chance(0.3)) pose.mesh = g.chance(0.5) ? null : meshSpec(g);
        ops.push(pose);
        tags.add("pose with ops");
    }
    ops.push({ op: "evaluate", output: ["final", "absolute", "local", "world", "positions"] });
    c.ops = ops;
    return { c, tags };
}

function allSmall(v) {
    if (typeof v === "number") return Number.isFinite(v) && Math.abs(v) < MAX_ABS;
    if (Array.isArray(v)) return v.every(allSmall);
    if (v && typeof v === "object") return Object.values(v).every(allSmall);
    return true;
}

function main(argv) {
    const o = parseGenArgs("gen_ops.mjs", argv, { seed: 1, count: 10, mirror: 0 }, ["--mirror"]);
    if (o === null) return 2;
    const { seed, count, named } = o;
    MIRROR = o.mirror === 1;
    const g = new Gen(seed);
    const out = [];
    for (let k = 0; k < count; k++) {
        for (;;) {
            const { c, tags } = makeCase(g);
            let ok = false;
            try {
                ok = allSmall(evalCase(JSON.parse(JSON.stringify(c))));
            } catch (e) {
                ok = false;
            }
            if (!ok) continue;
            out.push(JSON.stringify(named ? { name: `ops${seed}-${k} ${[...tags].sort().join(", ")}`, case: c } : c));
            break;
        }
    }
    writeLines(out);
    return 0;
}

process.exitCode = main(process.argv.slice(2));
