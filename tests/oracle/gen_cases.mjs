#!/usr/bin/env node
// Seeded random generator of `skinner eval` cases.
//
//   node gen_cases.mjs --seed S --count N [--named]
//
// Prints N cases as JSON Lines. With --named every line is a wrapper
// {"name": "seed<S>-<k> <description>", "case": {...}} (what babylon_eval.mjs
// --jsonl turns into a committed conformance line). Same seed, same output:
// the only randomness is mulberry32(S); Math.random is never used.
//
// Every case is run through the Babylon oracle while generating it; a case
// whose results are not all finite and below MAX_ABS is drawn again (the draw
// continues the same PRNG stream, so this stays deterministic).

import { buildSkeleton, evalCase, runOp } from "./babylon_eval.mjs";
import { Gen, MAX_ABS, parseGenArgs, rnd, writeLines } from "./gen_common.mjs";

// ---------------------------------------------------------------- values

/** "Profile" of a case: how wild its numbers may be. */
function makeProfile(g, n) {
    const big = n > 60;
    return {
        posRange: big ? 0.6 : g.pick([0.5, 2, 5]),
        scaleMode: big ? g.weighted([["one", 4], ["near", 4], ["neg", 1]]) : g.weighted([["one", 3], ["near", 3], ["nonuniform", 3], ["neg", 2], ["wild", 1]]),
        zeroScale: !big && g.chance(0.06),
        shear: g.chance(0.3),
        nonUnitQuat: g.chance(0.35),
    };
}

function randPos(g, P) {
    return [0, 1, 2].map(() => rnd(g.range(-P.posRange, P.posRange)));
}

function randScale(g, P) {
    if (P.zeroScale && g.chance(0.1)) {
        const s = [1, 1, 1];
        s[g.int(0, 2)] = 0;
        return s;
    }
    switch (P.scaleMode) {
        case "one":
            return g.chance(0.8) ? [1, 1, 1] : [0.95, 1.05, 1].map((x) => rnd(x * g.range(0.95, 1.05)));
        case "near": {
            const s = rnd(g.range(0.9, 1.1));
            return [s, s, s];
        }
        case "nonuniform":
            return [0, 1, 2].map(() => rnd(g.range(0.5, 2)));
        case "neg":
            return [0, 1, 2].map(() => rnd(g.range(0.8, 1.25) * (g.chance(0.3) ? -1 : 1)));
        default: // wild
            return [0, 1, 2].map(() => rnd(g.range(0.25, 3) * (g.chance(0.25) ? -1 : 1)));
    }
}

function randEuler(g) {
    return [0, 1, 2].map(() => rnd(g.range(-Math.PI, Math.PI)));
}

function randUnitQuat(g) {
    for (;;) {
        const q = [0, 1, 2, 3].map(() => g.range(-1, 1));
        const l = Math.hypot(...q);
        if (l > 0.1 && l <= 1) return q.map((x) => rnd(x / l, 6));
    }
}

function randQuat(g, P) {
    const q = randUnitQuat(g);
    if (P.nonUnitQuat && g.chance(0.5)) {
        if (g.chance(0.1)) return g.pick([[0, 0, 1, 1], [1, 0, 0, 1], [0, 0, 0, 2], [0, 0, 0, 0]]);
        const k = g.range(0.6, 1.4);
        return q.map((x) => rnd(x * k, 5));
    }
    return q;
}

// Row-vector TRS built here (not with Babylon) so the case is plain data.
function composeRows(s, q, t) {
    const [x, y, z, w] = q;
    const x2 = x + x, y2 = y + y, z2 = z + z;
    const xx = x * x2, xy = x * y2, xz = x * z2, yy = y * y2, yz = y * z2, zz = z * z2;
    const wx = w * x2, wy = w * y2, wz = w * z2;
    return [
        (1 - (yy + zz)) * s[0], (xy + wz) * s[0], (xz - wy) * s[0], 0,
        (xy - wz) * s[1], (1 - (xx + zz)) * s[1], (yz + wx) * s[1], 0,
        (xz + wy) * s[2], (yz - wx) * s[2], (1 - (xx + yy)) * s[2], 0,
        t[0], t[1], t[2], 1,
    ];
}

function mul(a, b) {
    const r = new Array(16).fill(0);
    for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) for (let k = 0; k < 4; k++) r[i * 4 + j] += a[i * 4 + k] * b[k * 4 + j];
    return r;
}

function randShear(g) {
    const m = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
    const slots = [1, 2, 4, 6, 8, 9];
    const k = g.int(1, 2);
    for (let i = 0; i < k; i++) m[g.pick(slots)] = rnd(g.range(-0.6, 0.6), 3);
    return m;
}

/** A random local-space matrix; `shear` forces or forbids a shear factor. */
function randMatrix(g, P, shear = P.shear && g.chance(0.4)) {
    let m = composeRows(randScale(g, P), g.chance(0.85) ? randUnitQuat(g) : randQuat(g, P), randPos(g, P));
    if (shear) m = mul(randShear(g), m);
    return m.map((x) => rnd(x, 5));
}

const IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

/** A matrix near `base` (a bind or rest close to the local, like real rigs). */
function nearMatrix(g, base, P) {
    if (g.chance(0.5)) return randMatrix(g, P);
    const q = [g.range(-0.2, 0.2), g.range(-0.2, 0.2), g.range(-0.2, 0.2), 1];
    const l = Math.hypot(...q);
    const d = composeRows([1, 1, 1], q.map((x) => x / l), randPos(g, { posRange: 0.3 }));
    return mul(d, base).map((x) => rnd(x, 5));
}

// ---------------------------------------------------------------- skeletons

const NAME_STYLES = [
    (i) => `b${i}`,
    (i) => `bone_${i}`,
    (i) => `mixamorig:Joint${i}`,
    (i) => `Armature|Bone.${String(i).padStart(3, "0")}`,
    (i) => `j ${i} "q"`,
    (i) => `腕${i}`,
];

function makeTopology(g, large) {
    const kind = large ? g.weighted([["chain", 3], ["random tree", 2], ["wide tree", 1]]) : g.weighted([["single", 1], ["chain", 4], ["wide tree", 3], ["random tree", 5], ["forest", 3]]);
    let n;
    if (large) n = g.int(100, 300);
    else if (kind === "single") n = 1;
    else n = g.chance(0.6) ? g.int(2, 12) : g.int(13, 40);
    const parent = new Array(n).fill(-1);
    for (let i = 1; i < n; i++) {
        switch (kind) {
            case "chain":
                parent[i] = i - 1;
                break;
            case "wide tree": {
                // root with many children, some of which have a few leaves
                const hubs = Math.max(1, Math.floor(n / 3));
                parent[i] = i <= hubs ? 0 : g.int(0, hubs);
                break;
            }
            case "forest":
                parent[i] = g.chance(0.15) ? -1 : g.int(0, i - 1);
                break;
            default: // random tree
                parent[i] = g.chance(0.5) ? i - 1 : g.int(0, i - 1);
        }
    }
    return { kind, n, parent };
}

function makeLocal(g, P, mode) {
    const out = {};
    switch (mode) {
        case "matrix":
            out.matrix = randMatrix(g, P);
            break;
        case "euler":
            if (g.chance(0.8)) out.position = randPos(g, P);
            if (g.chance(0.8)) out.rotation = randEuler(g);
            if (g.chance(0.6)) out.scaling = randScale(g, P);
            break;
        case "quat":
            if (g.chance(0.8)) out.position = randPos(g, P);
            if (g.chance(0.9)) out.rotationQuaternion = randQuat(g, P);
            if (g.chance(0.6)) out.scaling = randScale(g, P);
            break;
        default: // none: identity
            break;
    }
    return out;
}

/** Our own skeleton format (plus the bone names in creation-independent index order). */
function makeSkeleton(g, large) {
    const topo = makeTopology(g, large);
    const { n, parent } = topo;
    const P = makeProfile(g, n);
    const style = g.chance(0.7) ? NAME_STYLES[0] : g.pick(NAME_STYLES);
    const names = Array.from({ length: n }, (_, i) => style(i));
    const localModes = g.weighted([
        [["matrix"], 2], [["euler"], 2], [["quat"], 2], [["matrix", "euler", "quat", "none"], 4], [["euler", "quat"], 1],
    ]);
    const pBind = g.pick([0, 0, 0.3, 0.9]);
    const pRest = g.pick([0, 0, 0.3, 0.9]);
    const pLength = g.pick([0, 0.2, 1]);
    const orderMode = n === 1 ? "parent-first" : g.weighted([["parent-first", 4], ["shuffled", 5], ["reversed", 1]]);
    const indexMode = g.weighted([["none", 4], ["perm", 4], ["perm with -1", 3], ["explicit", 1]]);

    // Input position -> tree node.
    let inputOrder = Array.from({ length: n }, (_, i) => i);
    if (orderMode === "shuffled") inputOrder = g.shuffle(inputOrder);
    else if (orderMode === "reversed") inputOrder.reverse();

    // Slot of the bone at each input position; drawn over input positions so
    // an omitted "index" (= input position) never collides with an explicit one.
    let slot = inputOrder.map((_, i) => i);
    let omitSame = 0;
    if (indexMode !== "none" && indexMode !== "explicit") {
        slot = g.shuffle(slot);
        if (indexMode === "perm with -1") {
            const k = g.int(1, Math.max(1, Math.floor(n / 4)));
            for (let i = 0; i < k; i++) slot[g.int(0, n - 1)] = -1;
        }
        omitSame = g.chance(0.5) ? 0.5 : 0;
    }

    const bones = inputOrder.map((node, pos) => {
        const b = { name: names[node], parent: parent[node] < 0 ? null : names[parent[node]] };
        if (parent[node] < 0 && g.chance(0.3)) delete b.parent; // "parent" is optional
        Object.assign(b, makeLocal(g, P, g.pick(localModes)));
        if (g.chance(pBind)) b.bind = b.matrix && g.chance(0.3) ? b.matrix.slice() : nearMatrix(g, b.matrix ?? IDENTITY, P);
        if (g.chance(pRest)) b.rest = randMatrix(g, P);
        if (g.chance(pLength)) b.length = rnd(g.range(0.05, 3), 3);
        if (indexMode !== "none") {
            if (!(slot[pos] === pos && g.chance(omitSame))) b.index = slot[pos];
        }
        return b;
    });
    const desc = [
        `${topo.kind} ${n}b`,
        ...(orderMode !== "parent-first" ? [orderMode] : []),
        `locals ${localModes.join("/")}`,
        ...(P.scaleMode !== "one" ? [`scale ${P.scaleMode}`] : []),
        ...(P.shear ? ["shear"] : []),
        ...(P.nonUnitQuat ? ["non-unit q"] : []),
        ...(P.zeroScale ? ["zero scales"] : []),
        ...(pBind ? ["bind"] : []),
        ...(pRest ? ["rest"] : []),
        ...(indexMode !== "none" ? [`index ${indexMode}`] : []),
    ];
    // serialize() rewrites order (parent-first) and index (explicit), so a
    // serialized case is described without those.
    const serialDesc = desc.filter((d) => d !== orderMode && !d.startsWith("index "));
    return { skeleton: { bones }, names: bones.map((b) => b.name), P, desc, serialDesc };
}

// ---------------------------------------------------------------- ops

function randBoneSet(g, P, withMatrix) {
    const s = {};
    const fields = [];
    if (withMatrix && g.chance(0.15)) fields.push("matrix");
    if (g.chance(0.5)) fields.push("position");
    if (g.chance(0.5)) fields.push(g.chance(0.5) ? "rotation" : "rotationQuaternion");
    if (g.chance(0.35)) fields.push("scaling");
    if (fields.length === 0) fields.push(g.pick(["position", "rotation", "rotationQuaternion", "scaling"]));
    // key order inside a bone never matters (fixed application order), so shuffle it
    for (const f of g.shuffle(fields)) {
        if (f === "matrix") s.matrix = randMatrix(g, P);
        else if (f === "position") s.position = randPos(g, P);
        else if (f === "rotation") s.rotation = randEuler(g);
        else if (f === "rotationQuaternion") s.rotationQuaternion = randQuat(g, P);
        else s.scaling = randScale(g, P);
    }
    return s;
}

function randBoneMap(g, P, names) {
    const n = names.length;
    const k = n <= 6 && g.chance(0.3) ? n : g.int(1, Math.min(n, 4));
    const chosen = g.shuffle(names).slice(0, k);
    const out = {};
    for (const name of chosen) out[name] = randBoneSet(g, P, true);
    return out;
}

function randOutput(g, large) {
    if (large) return g.chance(0.8) ? null : g.pick([["final", "local"], ["absolute"]]);
    if (g.chance(0.4)) return null;
    const subsets = [["final"], ["absolute"], ["local"], ["final", "absolute"], ["final", "local"], ["absolute", "local"], ["final", "absolute", "local"]];
    const s = g.pick(subsets);
    return g.chance(0.25) ? g.shuffle(s) : s;
}

function evalOp(g, P, op, large) {
    const o = { op };
    if (g.chance(0.25)) o.initialSkinMatrix = randMatrix(g, P, g.chance(0.2));
    const out = randOutput(g, large);
    if (out) o.output = out;
    return o;
}

function makeOps(g, P, names, large) {
    const count = large ? g.int(1, 3) : g.int(1, 8);
    const ops = [];
    let partialRun = g.chance(0.3); // a run of single-field sets on one bone: exercises the TRS cache
    for (let i = 0; i < count; i++) {
        const kind = g.weighted([["set", 25], ["pose", 20], ["evaluate", 20], ["setBind", 10], ["setRest", 8], ["returnToRest", 10]]);
        switch (kind) {
            case "set":
                if (partialRun) {
                    partialRun = false;
                    const bone = g.pick(names);
                    const fields = g.shuffle(["position", "rotation", "rotationQuaternion", "scaling"]).slice(0, g.int(2, 4));
                    for (const f of fields) {
                        const s = {};
                        if (f === "position") s.position = randPos(g, P);
                        else if (f === "rotation") s.rotation = randEuler(g);
                        else if (f === "rotationQuaternion") s.rotationQuaternion = randQuat(g, P);
                        else s.scaling = randScale(g, P);
                        ops.push({ op: "set", bones: { [bone]: s } });
                        if (g.chance(0.3)) ops.push(evalOp(g, P, "evaluate", large));
                    }
                } else {
                    ops.push({ op: "set", bones: randBoneMap(g, P, names) });
                }
                break;
            case "pose": {
                const bones = randBoneMap(g, P, names);
                ops.push({ op: "pose", bones, ...evalOp(g, P, "pose", large) });
                break;
            }
            case "evaluate":
                ops.push(evalOp(g, P, "evaluate", large));
                break;
            case "setBind": {
                const o = { op: "setBind", bone: g.pick(names), matrix: randMatrix(g, P) };
                const kl = g.weighted([[true, 5], [null, 4], [false, 1]]);
                if (kl !== null) o.keepLocal = kl;
                ops.push(o);
                break;
            }
            case "setRest":
                ops.push({ op: "setRest", bone: g.pick(names), matrix: randMatrix(g, P) });
                break;
            default:
                ops.push(g.chance(0.5) ? { op: "returnToRest" } : { op: "returnToRest", bone: g.pick(names) });
        }
    }
    const last = ops[ops.length - 1].op;
    if (last !== "evaluate" && last !== "pose") ops.push(evalOp(g, P, "evaluate", large));
    return ops;
}

function opsSummary(ops) {
    const code = { set: "s", pose: "p", evaluate: "e", setBind: "b", setRest: "r", returnToRest: "t" };
    return ops.map((o) => code[o.op] + (o.op === "setBind" && o.keepLocal === true ? "k" : "") + (o.op === "returnToRest" && o.bone ? "1" : "") + (o.initialSkinMatrix ? "i" : "")).join("");
}

// ---------------------------------------------------------------- serialize()

/** Builds the skeleton in Babylon, optionally changes it, returns serialize() output. */
function toSerialized(g, made) {
    const sk = buildSkeleton(made.skeleton);
    try {
        // Bind/rest/local all differ in a real saved skeleton; Parse then uses
        // the saved bind as the new local and bind.
        for (const b of sk.bones) {
            if (g.chance(0.3)) b.setRestMatrix(b.getLocalMatrix().clone());
        }
        // serialize() returns the Float32Array of each matrix (asArray()); a plain
        // JSON.stringify would write it as {"0":..,"15":..}. Cases use the array
        // form that .babylon exporters write; Parse reads both the same way.
        const plain = (k, v) => (v instanceof Float32Array || v instanceof Float64Array ? Array.from(v) : v);
        return JSON.parse(JSON.stringify(sk.serialize(), plain));
    } finally {
        sk.dispose();
    }
}

// ---------------------------------------------------------------- cases

// skinnerd rejects a bind pose whose absolute bind matrix is singular (Babylon
// silently uses a copy as the "inverse"), so such cases are drawn again.
function bindsInvertible(c) {
    const sk = buildSkeleton(c.skeleton);
    try {
        const ok = () => sk.bones.every((b) => b._absoluteBindMatrix.determinant() !== 0);
        if (!ok()) return false;
        for (const op of c.ops ?? []) {
            if (op.op === "pose" || op.op === "evaluate") continue;
            runOp(sk, op, "op");
            if (op.op === "setBind" && !ok()) return false;
        }
        return true;
    } finally {
        sk.dispose();
    }
}

function resultsOk(res) {
    for (const r of res.results) {
        for (const k of Object.keys(r)) {
            for (const x of r[k]) if (!Number.isFinite(x) || Math.abs(x) > MAX_ABS) return false;
        }
    }
    return true;
}

function makeCase(g) {
    for (;;) {
        const large = g.chance(0.035);
        const serialized = !large && g.chance(0.1);
        const made = makeSkeleton(g, large);
        let skeleton = made.skeleton;
        let desc = made.desc;
        let names = made.names;
        if (serialized) {
            skeleton = toSerialized(g, made);
            names = skeleton.bones.map((b) => b.name);
            desc = ["serialize() format", ...made.serialDesc];
        }
        const ops = makeOps(g, made.P, names, large);
        const c = { skeleton, ops };
        let res;
        try {
            res = evalCase(c);
        } catch (e) {
            throw new Error(`generator produced an invalid case: ${e.message}`);
        }
        if (!resultsOk(res) || !bindsInvertible(c)) {
            if (process.env.GEN_DEBUG) console.error(`rejected: ${desc.join(", ")}`);
            continue;
        }
        return { c, desc: `${desc.join(", ")}; ops ${opsSummary(ops)}` };
    }
}

function main(argv) {
    const o = parseGenArgs("gen_cases.mjs", argv);
    if (o === null) return 2;
    const g = new Gen(o.seed);
    const lines = [];
    for (let k = 0; k < o.count; k++) {
        const { c, desc } = makeCase(g);
        lines.push(JSON.stringify(o.named ? { name: `seed${o.seed}-${k} ${desc}`, case: c } : c));
    }
    writeLines(lines);
    return 0;
}

process.exitCode = main(process.argv.slice(2));
