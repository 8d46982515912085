#!/usr/bin/env node
// Babylon.js oracle for `skinner eval` cases: runs one case through real
// @babylonjs/core Bone/Skeleton objects (NullEngine) and prints the result in
// the same format as the C tool, so the two can be compared number by number.
//
//   node babylon_eval.mjs [CASE.json]        one case (stdin if no file) -> one result JSON
//   node babylon_eval.mjs --jsonl IN OUT     JSON Lines in bulk ("-" = stdin/stdout)
//
// In --jsonl mode a line is either a bare case, giving a bare result line, or a
// wrapper {"name", "case", ...}, giving the wrapper with "expected" set to the
// result (any previous "expected" is replaced). A case Babylon cannot run gives
// {"error": "..."} (bare) or a wrapper with "error" instead of "expected".
//
// Every call below was checked against node_modules/@babylonjs/core/Bones/
// bone.pure.js and skeleton.js (9.34.0); see tests/conformance/README.md.

import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { keepSign, line as signedLine } from "./babylon_common.mjs";

// Babylon logs its banner with console.log; keep stdout for results only.
console.log = (...args) => console.error(...args);

const B = await import("@babylonjs/core");
const { NullEngine, Scene, Skeleton, Bone, Matrix, Vector3, Quaternion, TransformNode, BoneIKController, BoneLookController } = B;

let engine = null;
let scene = null;

function getScene() {
    if (!scene) {
        engine = new NullEngine();
        scene = new Scene(engine);
    }
    return scene;
}

class CaseError extends Error {}

function fail(msg) {
    throw new CaseError(msg);
}

function isNum(x) {
    return typeof x === "number" && Number.isFinite(x);
}

function numArray(v, n, what) {
    if (!Array.isArray(v) || v.length !== n || !v.every(isNum)) {
        fail(`${what}: expected ${n} finite numbers`);
    }
    return v;
}

function mat(v, what) {
    return Matrix.FromArray(numArray(v, 16, what));
}

function vec3(v, what) {
    const a = numArray(v, 3, what);
    return new Vector3(a[0], a[1], a[2]);
}

function quat(v, what) {
    const a = numArray(v, 4, what);
    return new Quaternion(a[0], a[1], a[2], a[3]);
}

/**
 * A serialized matrix: 16 numbers, or the {"0": .., "15": ..} object that
 * JSON.stringify makes of the Float32Array Babylon's serialize() returns
 * (Matrix.FromArray indexes both the same way).
 */
function matLike(v, what) {
    if (Array.isArray(v)) return numArray(v, 16, what);
    if (!v || typeof v !== "object" || Object.keys(v).length !== 16) fail(`${what}: expected 16 finite numbers`);
    for (let i = 0; i < 16; i++) if (!isNum(v[i])) fail(`${what}: expected 16 finite numbers`);
    return v;
}

/** True when the skeleton is in Babylon Skeleton.serialize() format. */
export function isSerializedSkeleton(sk) {
    return !!(sk && Array.isArray(sk.bones) && sk.bones.some((b) => b && typeof b === "object" && "parentBoneIndex" in b));
}

/** Initial local matrix of a bone in our own format (never normalizes the quaternion). */
function initialLocal(spec, what) {
    if ("matrix" in spec) {
        for (const k of ["position", "rotation", "rotationQuaternion", "scaling"]) {
            if (k in spec) fail(`${what}: "matrix" and "${k}" are exclusive`);
        }
        return mat(spec.matrix, `${what}.matrix`);
    }
    if ("rotation" in spec && "rotationQuaternion" in spec) {
        fail(`${what}: "rotation" and "rotationQuaternion" are exclusive`);
    }
    const s = "scaling" in spec ? vec3(spec.scaling, `${what}.scaling`) : new Vector3(1, 1, 1);
    const t = "position" in spec ? vec3(spec.position, `${what}.position`) : new Vector3(0, 0, 0);
    let q;
    if ("rotationQuaternion" in spec) {
        q = quat(spec.rotationQuaternion, `${what}.rotationQuaternion`);
    } else if ("rotation" in spec) {
        const r = numArray(spec.rotation, 3, `${what}.rotation`);
        q = Quaternion.RotationYawPitchRoll(r[1], r[0], r[2]);
    } else {
        q = Quaternion.Identity();
    }
    return Matrix.Compose(s, q, t);
}

/**
 * Creation order of our own format: for each input bone, its not yet created
 * ancestors (root first), then itself (= Skeleton.sortBones over the input).
 */
function creationOrder(bones) {
    const byName = new Map();
    bones.forEach((b, i) => {
        if (!b || typeof b !== "object") fail(`skeleton.bones[${i}]: not an object`);
        if (typeof b.name !== "string") fail(`skeleton.bones[${i}].name: expected a string`);
        if (byName.has(b.name)) fail(`skeleton.bones[${i}].name: duplicate name "${b.name}"`);
        byName.set(b.name, i);
    });
    bones.forEach((b, i) => {
        const p = b.parent ?? null;
        if (p !== null && (typeof p !== "string" || !byName.has(p))) fail(`skeleton.bones[${i}].parent: unknown bone ${JSON.stringify(p)}`);
    });
    const order = [];
    const state = new Array(bones.length).fill(0); // 0 new, 1 visiting, 2 placed
    const visit = (i) => {
        if (state[i] === 2) return;
        if (state[i] === 1) fail(`skeleton.bones[${i}]: parent cycle through "${bones[i].name}"`);
        state[i] = 1;
        const p = bones[i].parent ?? null;
        if (p !== null) visit(byName.get(p));
        state[i] = 2;
        order.push(i);
    };
    for (let i = 0; i < bones.length; i++) visit(i);
    return order;
}

/** Builds a fresh Babylon skeleton from the case's "skeleton"; the caller disposes it. */
export function buildSkeleton(skSpec) {
    const sc = getScene();
    if (!skSpec || typeof skSpec !== "object" || !Array.isArray(skSpec.bones)) fail("skeleton.bones: expected an array");
    if (isSerializedSkeleton(skSpec)) {
        // Parse only dereferences these fields; anything else it tolerates.
        skSpec.bones.forEach((b, i) => {
            const what = `skeleton.bones[${i}]`;
            if (!b || typeof b !== "object") fail(`${what}: not an object`);
            if (typeof b.name !== "string") fail(`${what}.name: expected a string`);
            if (!Number.isInteger(b.parentBoneIndex)) fail(`${what}.parentBoneIndex: expected an integer`);
            matLike(b.matrix, `${what}.matrix`);
            if (b.rest) matLike(b.rest, `${what}.rest`);
            if ("index" in b && b.index !== null && !Number.isInteger(b.index)) fail(`${what}.index: expected an integer`);
        });
        // Exactly what Babylon does with a serialized skeleton; then each
        // bone's "animations" list (skinnerd's extension, which Parse does
        // not read) parsed onto the bone after its "animation", in order.
        const parsed = Skeleton.Parse(skSpec, sc);
        skSpec.bones.forEach((b, i) => {
            for (const a of Array.isArray(b.animations) ? b.animations : []) parsed.bones[i].animations.push(B.Animation.Parse(a));
        });
        return parsed;
    }
    const bones = skSpec.bones;
    const order = creationOrder(bones);
    const sk = new Skeleton("oracle", "oracle", sc);
    const made = new Map();
    for (const i of order) {
        const spec = bones[i];
        const what = `skeleton.bones[${i}]`;
        const local = initialLocal(spec, what);
        const bind = "bind" in spec ? mat(spec.bind, `${what}.bind`) : null;
        const rest = "rest" in spec ? mat(spec.rest, `${what}.rest`) : null;
        let index = i;
        if ("index" in spec) {
            if (!Number.isInteger(spec.index)) fail(`${what}.index: expected an integer`);
            index = spec.index;
        }
        const parent = (spec.parent ?? null) === null ? null : made.get(spec.parent);
        const bone = new Bone(spec.name, sk, parent, local, rest, bind, index);
        if ("length" in spec) {
            if (!isNum(spec.length)) fail(`${what}.length: expected a finite number`);
            bone.length = spec.length;
        }
        made.set(spec.name, bone);
    }
    return sk;
}

function boneByName(sk, name, what) {
    const b = typeof name === "string" ? sk.bones.find((x) => x.name === name) : undefined;
    if (!b) fail(`${what}: unknown bone ${JSON.stringify(name)}`);
    return b;
}

/** Applies a "set"/"pose" bone map through Babylon's public setters. */
function applySet(sk, bonesSpec, what) {
    if (!bonesSpec || typeof bonesSpec !== "object" || Array.isArray(bonesSpec)) fail(`${what}.bones: expected an object`);
    for (const name of Object.keys(bonesSpec)) {
        const bone = boneByName(sk, name, `${what}.bones`);
        const s = bonesSpec[name];
        const w = `${what}.bones.${name}`;
        if (!s || typeof s !== "object") fail(`${w}: expected an object`);
        if ("rotation" in s && "rotationQuaternion" in s) fail(`${w}: "rotation" and "rotationQuaternion" are exclusive`);
        // The animation-target setter: copyFrom + _markAsDirtyAndDecompose. Its
        // "same updateFlag" early return cannot fire for a fresh FromArray matrix.
        if ("matrix" in s) bone._matrix = mat(s.matrix, `${w}.matrix`);
        if ("position" in s) bone.position = vec3(s.position, `${w}.position`);
        if ("rotation" in s) bone.rotation = vec3(s.rotation, `${w}.rotation`);
        else if ("rotationQuaternion" in s) bone.rotationQuaternion = quat(s.rotationQuaternion, `${w}.rotationQuaternion`);
        if ("scaling" in s) bone.scaling = vec3(s.scaling, `${w}.scaling`);
    }
}

const OUTPUTS = ["final", "absolute", "local", "world", "positions"];

// ---- Bone API ops (issue 13): the mesh is a TransformNode chain ----------------

// The case's default mesh (a TransformNode or null) while a case runs.
let caseMesh = null;
const madeNodes = [];

/** A TransformNode chain from {"position","rotation"|"rotationQuaternion","scaling","parent"}. */
function meshNode(spec, what) {
    if (spec === null || spec === undefined) return null;
    if (typeof spec !== "object" || Array.isArray(spec)) fail(`${what}: expected a mesh node`);
    for (const k of Object.keys(spec)) {
        if (!["position", "rotation", "rotationQuaternion", "scaling", "parent"].includes(k)) fail(`${what}.${k}: unknown field`);
    }
    const node = new TransformNode("oracle-mesh", getScene());
    madeNodes.push(node);
    if ("position" in spec) node.position = vec3(spec.position, `${what}.position`);
    if ("scaling" in spec) node.scaling = vec3(spec.scaling, `${what}.scaling`);
    if ("rotation" in spec && "rotationQuaternion" in spec) fail(`${what}: "rotation" and "rotationQuaternion" are exclusive`);
    if ("rotationQuaternion" in spec) node.rotationQuaternion = quat(spec.rotationQuaternion, `${what}.rotationQuaternion`);
    else if ("rotation" in spec) node.rotation = vec3(spec.rotation, `${what}.rotation`);
    if ("parent" in spec && spec.parent !== null) node.parent = meshNode(spec.parent, `${what}.parent`);
    node.computeWorldMatrix(true);
    return node;
}

/** The tNode of an op: its own "mesh" (null = none), else the default. */
function opMesh(op, what, dflt = caseMesh) {
    return "mesh" in op ? meshNode(op.mesh, `${what}.mesh`) : dflt;
}

function space(op, what) {
    if (!("space" in op)) return 0; // Space.LOCAL
    if (op.space === "local") return 0;
    if (op.space === "world") return 1; // Space.WORLD
    fail(`${what}.space: expected "local" or "world"`);
}

function num(op, k, what) {
    if (!isNum(op[k])) fail(`${what}.${k}: expected a finite number`);
    return op[k];
}

function axis(op, k, what) {
    const v = vec3(op[k], `${what}.${k}`);
    if (v.x === 0 && v.y === 0 && v.z === 0) fail(`${what}.${k}: zero-length axis`);
    return v;
}

const v3 = (v) => [v.x, v.y, v.z];

/** Runs one Bone API op through Babylon; a query returns its result object. */
function boneOp(sk, op, what, dfltMesh = caseMesh) {
    if (op.op === "setCurrentPoseAsRest") {
        if ("bone" in op) boneByName(sk, op.bone, `${what}.bone`).setCurrentPoseAsRest();
        else sk.setCurrentPoseAsRest();
        return null;
    }
    const bone = boneByName(sk, op.bone, `${what}.bone`);
    const sp = space(op, what);
    const t = opMesh(op, what, dfltMesh) ?? undefined;
    switch (op.op) {
        case "lookAt": {
            // One update() of a fresh controller; no mesh = an identity TransformNode.
            const mesh = t ?? meshNode({}, `${what}.mesh`);
            const opts = {};
            if ("upAxis" in op) opts.upAxis = vec3(op.upAxis, `${what}.upAxis`);
            if ("upAxisSpace" in op) {
                const i = ["local", "world", "bone"].indexOf(op.upAxisSpace);
                if (i < 0) fail(`${what}.upAxisSpace: expected "local", "world" or "bone"`);
                opts.upAxisSpace = i; // Space.LOCAL, WORLD, BONE
            }
            if ("yawAxis" in op) opts.yawAxis = axis(op, "yawAxis", what);
            if ("pitchAxis" in op) opts.pitchAxis = axis(op, "pitchAxis", what);
            for (const k of ["minYaw", "maxYaw", "minPitch", "maxPitch", "adjustYaw", "adjustPitch", "adjustRoll", "slerpAmount"]) {
                if (k in op) opts[k] = num(op, k, what);
            }
            if ("useAbsoluteValueForYaw" in op) opts.useAbsoluteValueForYaw = op.useAbsoluteValueForYaw === true;
            new BoneLookController(mesh, bone, vec3(op.target, `${what}.target`), opts).update();
            return null;
        }
        case "ik": {
            // One update() of a fresh controller; no mesh = an identity TransformNode.
            const mesh = t ?? meshNode({}, `${what}.mesh`);
            const opts = {};
            if ("poleTargetBone" in op) opts.poleTargetBone = boneByName(sk, op.poleTargetBone, `${what}.poleTargetBone`);
            // Meshes as targets: update() reads targetMesh.getAbsolutePosition() (float32) and
            // poleTargetLocalOffset through poleTargetMesh's world matrix.
            if ("targetMesh" in op) opts.targetMesh = meshNode(op.targetMesh, `${what}.targetMesh`);
            if ("poleTargetMesh" in op) opts.poleTargetMesh = meshNode(op.poleTargetMesh, `${what}.poleTargetMesh`);
            if ("poleTargetLocalOffset" in op) opts.poleTargetLocalOffset = vec3(op.poleTargetLocalOffset, `${what}.poleTargetLocalOffset`);
            if ("poleAngle" in op) opts.poleAngle = num(op, "poleAngle", what);
            if ("bendAxis" in op) opts.bendAxis = axis(op, "bendAxis", what);
            if ("maxAngle" in op) opts.maxAngle = num(op, "maxAngle", what);
            if ("slerpAmount" in op) opts.slerpAmount = num(op, "slerpAmount", what);
            const ik = new BoneIKController(mesh, bone, opts);
            if (ik._notEnoughInformation) {
                // A leaf of length 0: Babylon logs an error and update() does nothing. Without a
                // parent too, but skinnerd refuses that one (422), as it refuses a missing pole.
                if (!bone.getParent()) fail(`${what}.bone: not enough information for IK`);
                return null;
            }
            if (!("targetMesh" in op)) ik.targetPosition.copyFrom(vec3(op.target, `${what}.target`));
            if ("poleTarget" in op) {
                // A pole given as a position: no pole bone (the options would default it to the grandparent).
                ik.poleTargetBone = undefined;
                ik.poleTargetPosition.copyFrom(vec3(op.poleTarget, `${what}.poleTarget`));
            } else if (!ik.poleTargetBone && !ik.poleTargetMesh) fail(`${what}.bone: IK needs a pole`);
            ik.update();
            return null;
        }
        case "translate": bone.translate(vec3(op.vector, `${what}.vector`), sp, t); return null;
        case "setPosition": bone.setPosition(vec3(op.position, `${what}.position`), sp, t); return null;
        case "setAbsolutePosition": bone.setAbsolutePosition(vec3(op.position, `${what}.position`), t); return null;
        case "scale": {
            const s = numArray(op.scale, 3, `${what}.scale`);
            bone.scale(s[0], s[1], s[2], op.scaleChildren === true);
            return null;
        }
        case "setScale": bone.setScale(vec3(op.scale, `${what}.scale`)); return null;
        case "setYawPitchRoll": bone.setYawPitchRoll(num(op, "yaw", what), num(op, "pitch", what), num(op, "roll", what), sp, t); return null;
        case "rotate": bone.rotate(axis(op, "axis", what), num(op, "amount", what), sp, t); return null;
        case "setAxisAngle": bone.setAxisAngle(axis(op, "axis", what), num(op, "angle", what), sp, t); return null;
        case "setRotation": bone.setRotation(vec3(op.rotation, `${what}.rotation`), sp, t); return null;
        case "setRotationQuaternion": bone.setRotationQuaternion(quat(op.quaternion, `${what}.quaternion`), sp, t); return null;
        case "setRotationMatrix": bone.setRotationMatrix(mat(op.matrix, `${what}.matrix`), sp, t); return null;
        case "query": {
            let value;
            switch (op.get) {
                case "position": value = v3(bone.getPosition(sp, t ?? null)); break;
                case "absolutePosition": value = v3(bone.getAbsolutePosition(t ?? null)); break;
                case "direction": value = v3(bone.getDirection(vec3(op.axis, `${what}.axis`), t ?? null)); break;
                case "rotation": value = v3(bone.getRotation(sp, t ?? null)); break;
                case "rotationQuaternion": {
                    const q = bone.getRotationQuaternion(sp, t ?? null);
                    value = [q.x, q.y, q.z, q.w];
                    break;
                }
                case "rotationMatrix": value = Array.from(bone.getRotationMatrix(sp, t).m); break;
                case "scale": value = v3(bone.getScale()); break;
                case "absolutePositionFromLocal": value = v3(bone.getAbsolutePositionFromLocal(vec3(op.point, `${what}.point`), t ?? null)); break;
                case "localPositionFromAbsolute": value = v3(bone.getLocalPositionFromAbsolute(vec3(op.point, `${what}.point`), t ?? null)); break;
                default: fail(`${what}.get: unknown query ${JSON.stringify(op.get)}`);
            }
            return { query: op.get, bone: bone.name, value };
        }
        default:
            fail(`${what}.op: unknown op ${JSON.stringify(op.op)}`);
    }
}

const BONE_OPS = ["translate", "setPosition", "setAbsolutePosition", "scale", "setScale", "setYawPitchRoll", "rotate", "setAxisAngle",
    "setRotation", "setRotationQuaternion", "setRotationMatrix", "setCurrentPoseAsRest", "query", "ik", "lookAt"];

function evaluate(sk, op, what) {
    let outputs = ["final"];
    if ("output" in op) {
        if (!Array.isArray(op.output) || !op.output.every((o) => OUTPUTS.includes(o))) fail(`${what}.output: expected a subset of ${OUTPUTS.join(", ")}`);
        outputs = op.output;
    }
    const ism = "initialSkinMatrix" in op && op.initialSkinMatrix !== null ? mat(op.initialSkinMatrix, `${what}.initialSkinMatrix`) : null;
    const nb = sk.bones.length;
    const target = new Float32Array(16 * (nb + 1));
    sk._computeTransformMatrices(target, ism);
    const res = {};
    if (outputs.includes("final")) res.final = Array.from(target);
    if (outputs.includes("absolute")) {
        // Skeleton.computeAbsoluteMatrices only walks bones[0]; every root is wanted.
        for (const b of sk.bones) if (!b.getParent()) b.computeAbsoluteMatrices();
        const a = new Float32Array(16 * nb);
        for (const b of sk.bones) if (b._index !== -1) b._absoluteMatrix.copyToArray(a, b.getIndex() * 16);
        res.absolute = Array.from(a);
    }
    if (outputs.includes("local")) {
        const l = new Float32Array(16 * nb);
        for (const b of sk.bones) if (b._index !== -1) b.getLocalMatrix().copyToArray(l, b.getIndex() * 16);
        res.local = Array.from(l);
    }
    if (outputs.includes("world") || outputs.includes("positions")) {
        // What bone.getAbsolutePosition(mesh) reads, for every bone (every root computed).
        for (const b of sk.bones) if (!b.getParent()) b.computeAbsoluteMatrices();
        const mesh = opMesh(op, what);
        const w = new Float32Array(16 * nb), p = new Float32Array(3 * nb);
        const tmp = new Matrix();
        sk.bones.forEach((b, i) => {
            tmp.copyFrom(b._absoluteMatrix);
            if (mesh) tmp.multiplyToRef(mesh.getWorldMatrix(), tmp);
            tmp.copyToArray(w, 16 * i);
            p[3 * i] = tmp.m[12];
            p[3 * i + 1] = tmp.m[13];
            p[3 * i + 2] = tmp.m[14];
        });
        if (outputs.includes("world")) res.world = Array.from(w);
        if (outputs.includes("positions")) res.positions = Array.from(p);
    }
    return res;
}

/** Runs one state-changing op (or an evaluate, whose result is returned). */
export function runOp(sk, op, what) {
    switch (op.op) {
        case "set":
            applySet(sk, op.bones, what);
            return null;
        case "setBind": {
            const bone = boneByName(sk, op.bone, `${what}.bone`);
            const m = mat(op.matrix, `${what}.matrix`);
            if (op.keepLocal === true) bone.updateMatrix(m, true, false);
            else bone.setBindMatrix(m);
            return null;
        }
        case "setRest":
            boneByName(sk, op.bone, `${what}.bone`).setRestMatrix(mat(op.matrix, `${what}.matrix`));
            return null;
        case "returnToRest":
            if ("bone" in op) boneByName(sk, op.bone, `${what}.bone`).returnToRest();
            else sk.returnToRest();
            return null;
        case "evaluate":
            return evaluate(sk, op, what);
        case "copyAnimationRange": {
            // Babylon-format clips (src/io/sk_banim.h): the source parsed as is.
            const source = Skeleton.Parse(op.from, getScene());
            const ok = sk.copyAnimationRange(source, op.name, op.rescale === true);
            source.dispose();
            if (!ok) fail(`${what}: Babylon's copyAnimationRange returned false`);
            return null;
        }
        default:
            if (BONE_OPS.includes(op.op)) return boneOp(sk, op, what);
            fail(`${what}.op: unknown op ${JSON.stringify(op.op)}`);
    }
}

/**
 * Babylon-format clips (src/io/sk_banim.h): the seconds of a pose naming an
 * "animation" of a serialized skeleton become frames of a skeleton range
 * exactly as skinnerd computes them (C doubles = JS numbers), each played
 * by skeleton.beginAnimation(range) + Animatable.goToFrame(frame).
 */
function clipOf(sk, name, what) {
    // The live skeleton's ranges (Parse order, then copied ones) and the
    // first animated bone's framePerSecond, as src/io/sk_banim.c numbers them.
    const ranges = sk.getAnimationRanges().filter((r) => r);
    const first = sk.bones.find((b) => b.animations.length);
    if (!first) fail(`${what}.animation: this skeleton has no animations`);
    const fps = first.animations[0].framePerSecond;
    if (ranges.length === 0) {
        if (name !== "animation0" && name !== "0" && name !== 0) fail(`${what}.animation: no animation ${JSON.stringify(name)}`);
        let last = 0;
        for (const b of sk.bones) for (const a of b.animations) last = Math.max(last, a.getKeys()[a.getKeys().length - 1].frame);
        return { range: null, from: 0, to: last, fps };
    }
    const k = typeof name === "number" ? name : ranges.findIndex((r) => r.name === name);
    const r = ranges[k];
    if (!r) fail(`${what}.animation: no animation ${JSON.stringify(name)}`);
    return { range: r.name, from: r.from, to: r.to, fps };
}

/** skinnerd's layer mask (src/io/sk_animops.c) as a targetMask: a bone plays
 * when its weight is 1 ("bone"/"include": those bones; "exclude": all but
 * those; "subtree" adds descendants; "weights" per name, "default" for the
 * rest). Other targets (the skeleton) pass. */
function maskFilter(sk, mask) {
    const inc = new Set([...(mask.bone !== undefined ? [mask.bone] : []), ...(mask.include ?? [])]);
    const exc = new Set(mask.exclude ?? []);
    if (mask.subtree) {
        const walk = (b, set) => {
            set.add(b.name);
            for (const c of b.getChildren()) walk(c, set);
        };
        for (const set of [inc, exc]) for (const b of sk.bones) if (set.has(b.name)) walk(b, set);
    }
    const rest = mask.default ?? (mask.bone !== undefined || mask.include ? 0 : 1);
    const weight = (name) =>
        mask.weights && name in mask.weights ? mask.weights[name] : exc.has(name) ? 0 : inc.has(name) ? 1 : rest;
    return (t) => !(t instanceof Bone) || weight(t.name) === 1;
}

function clipTimes(op) {
    if ("times" in op) return op.times;
    if ("from" in op) {
        const n = Math.floor((op.to - op.from) * op.fps + 1e-9) + 1;
        return Array.from({ length: n }, (_, i) => op.from + i / op.fps);
    }
    return [op.time ?? 0];
}

function clipFrame(clip, time, loop) {
    const span = clip.to - clip.from;
    let rel = time * clip.fps;
    if (loop && span > 0 && Number.isFinite(rel)) {
        rel = rel % span;
        if (rel < 0) rel += span;
    }
    let f = clip.from + rel;
    if (!(f >= clip.from)) f = clip.from;
    else if (f > clip.to) f = clip.to;
    return f;
}

function playFrame(sk, clip, frame) {
    // The keys of a fresh Skeleton.Parse: beginAnimation's RuntimeAnimations
    // insert their frame-0 keys, goToFrame clamps and interpolates.
    const animatable = clip.range === null ? getScene().beginAnimation(sk, clip.from, clip.to) : sk.beginAnimation(clip.range);
    animatable.goToFrame(frame);
    return animatable;
}

/**
 * Babylon-format layers with one crossfaded in ("blendIn"): one skeleton,
 * posed by the "from" clip (skeleton.beginAnimation(range) + goToFrame,
 * then stopped) or as it is; then one scene.beginWeightedAnimation per
 * layer, the blended one's RuntimeAnimations made while its bones'
 * Animations have enableBlending and blendingSpeed set (the others'
 * without: RuntimeAnimation reads enableBlending when made), and each
 * frame of the range in order every layer's goToFrame(frame, true) and a
 * scene step (the late animation bindings). "frames" [s, e) plays frames
 * 0..e-1 at k / fps and keeps k >= s: frame k is write k, as skinnerd
 * counts it.
 */
function blendInLayers(tmp, op, what, results) {
    const sc = getScene();
    const bi = op.layers.findIndex((l) => l.blendIn);
    const bl = op.layers[bi].blendIn;
    const clips = op.layers.map((l, i) => clipOf(tmp, l.animation, `${what}.layers[${i}]`));
    if (bl.from) {
        const fc = clipOf(tmp, bl.from.animation, `${what}.layers[${bi}].blendIn.from`);
        playFrame(tmp, fc, clipFrame(fc, bl.from.time ?? 0, bl.from.loop === true)).stop();
    }
    const setBlend = (on) => {
        for (const b of tmp.bones)
            for (const a of b.animations) {
                a.enableBlending = on;
                a.blendingSpeed = bl.speed;
            }
    };
    const anims = op.layers.map((l, i) => {
        setBlend(i === bi);
        return sc.beginWeightedAnimation(tmp, clips[i].from, clips[i].to, l.weight ?? 1, false, 1.0);
    });
    setBlend(false);
    for (const a of anims) a.pause();
    const first = op.frames ? op.frames[0] : 0;
    const steps = op.frames
        ? Array.from({ length: op.frames[1] }, (_, k) => k / op.fps)
        : clipTimes(op);
    steps.forEach((t, k) => {
        op.layers.forEach((l, i) => {
            const off = l.time ?? 0;
            anims[i].goToFrame(clipFrame(clips[i], off === 0 ? t : off + t, l.loop === true), true); // sk_sample_layer_time
        });
        sc._animationTime = 0;
        sc._animate(0);
        if (k < first) return;
        const r = evaluate(tmp, op, what);
        if (r.final) r.final = keepSign(r.final); // the sign of zero kept ("-0.0")
        results.push(r);
    });
    for (const a of anims) a.stop();
}

/** Evaluates one case; returns {order, results} or throws CaseError. */
export function evalCase(c) {
    if (!c || typeof c !== "object") fail("case: expected an object");
    const ops = c.ops ?? [];
    if (!Array.isArray(ops)) fail("ops: expected an array");
    const made = [];
    const fresh = () => {
        const s = buildSkeleton(c.skeleton);
        made.push(s);
        return s;
    };
    try {
        caseMesh = meshNode(c.mesh ?? null, "mesh");
        const sk = fresh();
        const order = sk.bones.map((b) => b.name);
        const results = [];
        ops.forEach((op, k) => {
            const what = `ops[${k}]`;
            if (!op || typeof op !== "object") fail(`${what}: expected an object`);
            if (op.op === "pose" && "layers" in op && isSerializedSkeleton(c.skeleton) && op.layers.some((l) => l.blendIn)) {
                const tmp = fresh();
                for (let j = 0; j < k; j++) if (ops[j].op !== "pose") runOp(tmp, ops[j], `ops[${j}]`);
                blendInLayers(tmp, op, what, results);
            } else if (op.op === "pose" && "layers" in op && isSerializedSkeleton(c.skeleton)) {
                // Weighted layers of Babylon-format clips: one
                // scene.beginWeightedAnimation per layer (its range, its
                // weight), Animatable.goToFrame(frame, true) registers the
                // late animation bindings, and a scene step with every
                // animatable paused applies them (ProcessLateAnimationBindings
                // is not exported; paused animatables write nothing more).
                const probe = fresh();
                for (let j = 0; j < k; j++) if (ops[j].op !== "pose") runOp(probe, ops[j], `ops[${j}]`);
                const clips = op.layers.map((l, i) => clipOf(probe, l.animation, `${what}.layers[${i}]`));
                const ranged = "times" in op || "from" in op;
                for (const t of ranged ? clipTimes(op) : [0]) {
                    const tmp = fresh();
                    for (let j = 0; j < k; j++) if (ops[j].op !== "pose") runOp(tmp, ops[j], `ops[${j}]`);
                    const sc = getScene();
                    // A layer's mask (skinnerd's 0/1 form) is beginAnimation's targetMask.
                    const anims = op.layers.map((l, i) => {
                        if (l.additive !== true)
                            return sc.beginWeightedAnimation(tmp, clips[i].from, clips[i].to, l.weight ?? 1,
                                "speedRatio" in l ? l.loop === true : false, l.speedRatio ?? 1.0, undefined, undefined,
                                l.mask ? maskFilter(tmp, l.mask) : undefined);
                        // An additive layer: its own parse of the skeleton (the weighted
                        // layers keep the original keys), whose range is played once (the
                        // RuntimeAnimations insert their frame-0 keys) and then made additive
                        // with Skeleton.MakeAnimationAdditive (no ranges: each Animation with
                        // fromFrame/toFrame); its animations then run on this skeleton's
                        // bones in one isAdditive animatable of the layer's weight.
                        const side = fresh();
                        for (let j = 0; j < k; j++) if (ops[j].op !== "pose") runOp(side, ops[j], `ops[${j}]`);
                        const c = clips[i];
                        const ref = c.from + (l.reference ?? 0) * c.fps;
                        const probeAn = playFrame(side, c, c.from);
                        if (c.range === null) {
                            for (const b of side.bones)
                                for (const a of b.animations) B.Animation.MakeAnimationAdditive(a, { referenceFrame: ref, fromFrame: c.from, toFrame: c.to });
                        } else Skeleton.MakeAnimationAdditive(side, ref, c.range);
                        probeAn.stop();
                        const an = new B.Animatable(sc, tmp, c.from, c.to, false, 1.0, undefined, undefined, undefined, true);
                        const keep = l.mask ? maskFilter(tmp, l.mask) : () => true;
                        tmp.bones.forEach((b, bi) => {
                            if (side.bones[bi].animations.length && keep(b)) an.appendAnimations(b, side.bones[bi].animations);
                        });
                        an.reset();
                        an.weight = l.weight ?? 1;
                        return an;
                    });
                    op.layers.forEach((l, i) => {
                        const off = l.time ?? 0;
                        const time = ranged ? (off === 0 ? t : off + t) : off; // sk_sample_layer_time
                        if ("speedRatio" in l) {
                            // Played by the scene's step below at `time` since its start: the
                            // scene's clock is 0 then, and 0 - (-ms) is ms exactly.
                            anims[i]._localDelayOffset = -(time * 1000);
                            anims[i]._pausedDelay = null;
                            anims[i]._manualJumpDelay = null;
                        } else anims[i].goToFrame(clipFrame(clips[i], time, l.loop === true), true);
                    });
                    op.layers.forEach((l, i) => {
                        if (!("speedRatio" in l)) anims[i].pause();
                    });
                    sc._animationTime = 0;
                    sc._animate(0);
                    applySet(tmp, op.bones ?? {}, what);
                    results.push(evaluate(tmp, op, what));
                    for (const a of anims) a.stop();
                }
            } else if (op.op === "pose" && "animation" in op && isSerializedSkeleton(c.skeleton)) {
                const probe = fresh();
                for (let j = 0; j < k; j++) if (ops[j].op !== "pose") runOp(probe, ops[j], `ops[${j}]`);
                const clip = clipOf(probe, op.animation, what);
                for (const t of clipTimes(op)) {
                    const tmp = fresh();
                    for (let j = 0; j < k; j++) if (ops[j].op !== "pose") runOp(tmp, ops[j], `ops[${j}]`);
                    const animatable = playFrame(tmp, clip, clipFrame(clip, t, op.loop === true));
                    applySet(tmp, op.bones ?? {}, what);
                    results.push(evaluate(tmp, op, what));
                    animatable.stop();
                }
            } else if (op.op === "pose") {
                // A pose must leave no trace, TRS cache and flags included: replay
                // the history on a new skeleton and pose that one instead.
                const tmp = fresh();
                for (let j = 0; j < k; j++) if (ops[j].op !== "pose") runOp(tmp, ops[j], `ops[${j}]`);
                applySet(tmp, op.bones ?? {}, what);
                if ("ops" in op) {
                    // Bone API ops after the overrides, on the same scratch skeleton.
                    const pm = opMesh(op, what);
                    const queries = [];
                    op.ops.forEach((o, i) => {
                        const r = boneOp(tmp, o, `${what}.ops[${i}]`, pm);
                        if (r) queries.push(r);
                    });
                    const r = evaluate(tmp, op, what);
                    r.queries = queries;
                    results.push(r);
                } else results.push(evaluate(tmp, op, what));
            } else {
                const r = runOp(sk, op, what);
                if (r) results.push(r);
            }
        });
        return { order, results };
    } finally {
        for (const s of made) s.dispose();
        for (const n of madeNodes.splice(0)) n.dispose();
        caseMesh = null;
    }
}

function evalToJson(c) {
    try {
        return { ok: true, value: evalCase(c) };
    } catch (e) {
        if (e instanceof CaseError) return { ok: false, error: e.message };
        throw e;
    }
}

/** The value as a case line writes it: every number array of every result keeps the sign of zero. */
function signed(value) {
    if (value && Array.isArray(value.results))
        for (const r of value.results) {
            if (!r || typeof r !== "object") continue;
            for (const [k, v] of Object.entries(r)) if (Array.isArray(v)) r[k] = keepSign(v);
        }
    return value;
}

function readText(path) {
    return readFileSync(path === "-" ? 0 : path, "utf8");
}

function main(argv) {
    if (argv[0] === "--jsonl") {
        if (argv.length !== 3) {
            console.error("usage: babylon_eval.mjs --jsonl IN OUT");
            return 2;
        }
        const lines = readText(argv[1]).split("\n").filter((l) => l.trim() !== "");
        const out = [];
        let errors = 0;
        for (const line of lines) {
            const item = JSON.parse(line);
            const wrapped = item && typeof item === "object" && "case" in item;
            const r = evalToJson(wrapped ? item.case : item);
            if (!r.ok) errors++;
            if (wrapped) {
                const w = { ...item };
                delete w.expected;
                delete w.error;
                if (r.ok) w.expected = signed(r.value);
                else w.error = r.error;
                out.push(signedLine(w));
            } else {
                out.push(signedLine(r.ok ? signed(r.value) : { error: r.error }));
            }
        }
        const text = out.join("\n") + (out.length ? "\n" : "");
        if (argv[2] === "-") process.stdout.write(text);
        else writeFileSync(argv[2], text);
        if (errors) console.error(`babylon_eval: ${errors} of ${lines.length} cases failed`);
        return errors ? 1 : 0;
    }
    if (argv.length > 1 || (argv[0] && argv[0].startsWith("--"))) {
        console.error("usage: babylon_eval.mjs [CASE.json] | --jsonl IN OUT");
        return 2;
    }
    const r = evalToJson(JSON.parse(readText(argv[0] ?? "-")));
    if (!r.ok) {
        console.error(`babylon_eval: ${r.error}`);
        return 1;
    }
    process.stdout.write(signedLine(signed(r.value)) + "\n");
    return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
    process.exitCode = main(process.argv.slice(2));
}
