#!/usr/bin/env node
// Skinned vertices, normals and bounds of skinnerd against Babylon.js 9.34, bit for bit
// (issue 33). Run by conformance_mesh.sh (which checks node and the pinned Babylon first).
//
//   node conformance_mesh.mjs SKINNERD TESTS_DIR [--quick | --full] [--asset NAME.glb]...
//
// Starts SKINNERD on 127.0.0.1 (a port it picks), uploads each asset (skin 0), and for
// every clip asks for "vertices", "normals" and "bounds" at many clip times through every
// pose form: the rest pose, one POST /pose per time, one /poses batch of them (which must
// be the singles' bytes), a "times" range (each result the single's bytes) and a
// "from"/"to"/"fps" range (frame k at from + k/fps), and, for assets with 2 clips or more,
// weighted "layers" (one pose and a "times" range of offsets), and "bounds" (with
// "boundsConservative") on every frame at 60 fps (meshes over 5000 vertices only with --full). Babylon's numbers come from
// babylon_mesh.mjs in this process. A daemon number d matches Babylon's b when
// Object.is(Math.fround(d), b): the same float32, sign of zero included. When the daemon
// also knows "morphWeights" or "boundsConservative", those are checked too (weights equal to
// Babylon's influences, as doubles or as float32; conservative boxes contain the exact box).
// Then the odd inputs of tests/data/mesh_bad (badInputs; "--asset bad" alone runs them).
// Prints the first mismatches (asset, form, time, primitive, vertex, component, ulps) and
//   conformance-mesh: P passed, F failed (N numbers compared)
// Exit status: 0 all passed, 1 a mismatch, 77 the daemon does not know "vertices" yet.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadAsset } from "./babylon_mesh.mjs";

const FPS = 60;
const here = fileURLToPath(new URL(".", import.meta.url));
const OUT = ["vertices", "normals", "bounds"];
// FILE or FILE@SKIN (uploaded with ?skin=SKIN).
const ASSETS = ["Fox.glb", "CesiumMan.glb", "RiggedFigure.glb", "RobotExpressive.glb", "mannequiny-0.3.0.glb",
    "skin_morph.glb", "skin_8inf.glb", "skin_mirror.glb", "RiggedSimple.glb", "SimpleSkin.gltf",
    "SimpleSkin-multi-target.gltf", "RecursiveSkeletons.glb@5"];
const MAX_REPORT = 20;
const BIG_MESH = 5000; // vertices

// babylon_mesh.mjs sends console.log to stderr (Babylon logs there): reports go to stdout.
const say = (s) => process.stdout.write(`${s}\n`);
let passed = 0;
let failed = 0;
let numbers = 0;
let known = 0;
const check = (name, ok, detail = "") => {
    if (ok) passed++;
    else {
        failed++;
        if (failed <= MAX_REPORT) say(`FAIL ${name}${detail ? `: ${detail}` : ""}`);
    }
    return ok;
};

// ---- the daemon ------------------------------------------------------------------------

function startDaemon(bin) {
    return new Promise((resolve, reject) => {
        const p = spawn(bin, ["--listen", "127.0.0.1:0", "--max-answer-mb", "512", "--max-body", "8388608",
            "--memory-mb", "2048", "--idle-timeout", "300"], { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        p.stderr.on("data", (d) => (err += d));
        p.on("error", reject);
        p.on("exit", (code) => reject(new Error(`skinnerd exited (${code}): ${err.slice(0, 400)}`)));
        p.stdout.on("data", (d) => {
            out += d;
            const m = /listening on [^\n]*:(\d+)\n/.exec(out);
            if (m) {
                p.removeAllListeners("exit");
                resolve({ p, port: Number(m[1]) });
            }
        });
    });
}

function stopDaemon(d) {
    return new Promise((resolve) => {
        if (d.p.exitCode !== null) return resolve();
        const t = setTimeout(() => d.p.kill("SIGKILL"), 20000);
        d.p.on("exit", () => {
            clearTimeout(t);
            resolve();
        });
        d.p.kill("SIGTERM");
    });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request; a kept-alive socket the server closed meanwhile (idle timeout) is retried once. */
async function req(d, method, path, body, ctype = "application/json") {
    try {
        return await req1(d, method, path, body, ctype);
    } catch (e) {
        if (e.code !== "ECONNRESET" || d.p.exitCode !== null || d.p.signalCode !== null) throw e;
        return req1(d, method, path, body, ctype);
    }
}

function req1(d, method, path, body, ctype) {
    return new Promise((resolve, reject) => {
        const data = body === undefined ? null : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
        const headers = { Host: "localhost" };
        if (data) {
            headers["Content-Type"] = ctype;
            headers["Content-Length"] = data.length;
        }
        const r = http.request({ host: "127.0.0.1", port: d.port, method, path, headers, agent }, (res) => {
            const chunks = [];
            res.on("data", (c) => chunks.push(c));
            res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
        });
        r.on("error", reject);
        r.setTimeout(120000, () => r.destroy(new Error(`${method} ${path}: timeout`)));
        if (data) r.write(data);
        r.end();
    });
}

const parse = (buf) => {
    try {
        return JSON.parse(buf.toString("utf8"));
    } catch {
        return null;
    }
};

// ---- comparing -------------------------------------------------------------------------

const f32bits = new Float32Array(1);
const u32 = new Uint32Array(f32bits.buffer);
/** Ordered integer of a float32 value: adjacent floats differ by 1. */
function ordered(x) {
    f32bits[0] = x;
    const u = u32[0];
    return u & 0x80000000 ? -(u & 0x7fffffff) : u;
}
const ulps = (a, b) => Math.abs(ordered(a) - ordered(b));

/** First mismatch of two number arrays (daemon, Babylon), or null. */
function firstDiff(got, want, stride) {
    if (!Array.isArray(got)) return `not an array (${typeof got})`;
    if (got.length !== want.length) return `${got.length} numbers, Babylon ${want.length}`;
    for (let i = 0; i < want.length; i++) {
        numbers++;
        const g = got[i];
        if (typeof g !== "number" || !Object.is(Math.fround(g), want[i])) {
            const at = stride ? `vertex ${Math.floor(i / stride)} ${"xyz"[i % stride]}` : `${"xyz"[i]}`;
            const u = typeof g === "number" && Number.isFinite(g) && Number.isFinite(want[i]) ? `, ${ulps(Math.fround(g), want[i])} ulps` : "";
            return `${at}: daemon ${JSON.stringify(g)} (float32 ${Math.fround(g)}), Babylon ${want[i]}${u}`;
        }
    }
    return null;
}

/** Matches the daemon's items to Babylon's primitives by pointer (k-th use of a pointer to the k-th). */
function byPointer(items) {
    const seen = new Map();
    const out = new Map();
    for (const it of items) {
        const n = seen.get(it.primitive) ?? 0;
        seen.set(it.primitive, n + 1);
        out.set(`${it.primitive}#${n}`, it);
    }
    return out;
}

/** Compares one daemon answer object with one Babylon snapshot; returns a reason or null. */
export function compareAnswer(ans, snap) {
    if (!ans || typeof ans !== "object") return "answer is not an object";
    if (!Array.isArray(ans.vertices)) return `no "vertices" array (keys ${Object.keys(ans).join(",")})`;
    if (!Array.isArray(ans.bounds)) return `no "bounds" array`;
    const verts = byPointer(ans.vertices);
    const bounds = byPointer(ans.bounds);
    const want = byPointer(snap.primitives);
    for (const key of verts.keys()) if (!want.has(key)) return `the daemon answers ${key.split("#")[0]}, which Babylon does not skin`;
    for (const [key, p] of want) {
        const name = key.split("#")[0];
        const v = verts.get(key);
        if (!v) {
            if (!p.skinned) continue; // no JOINTS_0/WEIGHTS_0: Babylon returns the data as loaded
            return `${name}: missing from "vertices"`;
        }
        let why = firstDiff(v.positions, p.positions, 3);
        if (why) return `${name} positions ${why}`;
        if (p.normals) {
            why = firstDiff(v.normals, p.normals, 3);
            if (why) return `${name} normals ${why}`;
        } else if (v.normals !== undefined) return `${name}: normals, but the primitive has no NORMAL`;
        const b = bounds.get(key);
        if (!b) return `${name}: missing from "bounds"`;
        why = firstDiff(b.min, p.min, 0) ?? firstDiff(b.max, p.max, 0);
        if (why) return `${name} bounds ${firstDiff(b.min, p.min, 0) ? "min" : "max"} ${why}`;
    }
    return null;
}

// ---- Babylon ---------------------------------------------------------------------------

function skinnedFlags(scene, sk) {
    const flags = [];
    for (const m of scene.meshes) {
        if (m.skeleton !== sk || m.getTotalVertices() === 0) continue;
        flags.push(!!(m.getVerticesData("matricesIndices") && m.getVerticesData("matricesWeights")));
    }
    return flags;
}

function babylonPoses(asset, poses) {
    const { scene, restore } = asset;
    const sk = scene.skeletons.find((s) => s.id === `skeleton${asset.skin}`);
    const flags = skinnedFlags(scene, sk);
    const out = [];
    for (const { group, time, frame, layers } of poses) {
        restore();
        if (group) {
            group.start(false, 1, group.from, group.to);
            group.pause();
            group.goToFrame(frame ?? time * FPS);
        }
        if (layers) {
            // Weighted layers through Babylon's own blending, as babylon_gltf.mjs sampleLayers.
            for (const l of layers) {
                l.group.start(false, 1, l.group.from, l.group.to);
                l.group.pause();
                l.group.weight = l.weight;
            }
            for (const l of layers) l.group.goToFrame(l.time * FPS, true);
            scene._animate();
        }
        sk.prepare(true);
        const prims = [];
        const weights = new Map();
        let k = 0;
        for (const mesh of scene.meshes) {
            if (mesh.skeleton !== sk || mesh.getTotalVertices() === 0) continue;
            const primitive = (mesh._internalMetadata?.gltf?.pointers ?? []).find((s) => /^\/meshes\/\d+\/primitives\/\d+$/.test(s));
            const n = mesh.getNormalsData(true, true);
            mesh.refreshBoundingInfo(true, true);
            const bb = mesh.getBoundingInfo().boundingBox;
            prims.push({
                primitive,
                skinned: flags[k++],
                positions: mesh.getPositionData(true, true),
                normals: n,
                min: [bb.minimum.x, bb.minimum.y, bb.minimum.z],
                max: [bb.maximum.x, bb.maximum.y, bb.maximum.z],
            });
            const mtm = mesh.morphTargetManager;
            const meshPtr = primitive.replace(/\/primitives\/\d+$/, "");
            if (mtm && !weights.has(meshPtr)) {
                const w = [];
                for (let t = 0; t < mtm.numTargets; t++) w.push(mtm.getTarget(t).influence);
                weights.set(meshPtr, w);
            }
        }
        if (group) group.stop();
        for (const l of layers ?? []) {
            l.group.stop();
            l.group.weight = -1;
        }
        out.push({ primitives: prims, morphWeights: weights, final: Float32Array.from(sk._transformMatrices) });
    }
    restore();
    return out;
}

// ---- the forms -------------------------------------------------------------------------

function clipTimes(end, quick) {
    const f = quick ? [0.37, 0.618] : [0.13, 0.37, 0.5, 0.618, 0.91];
    const t = new Set([-0.25, 0, end, end + 0.5, ...f.map((x) => x * end)]);
    return [...t].sort((a, b) => a - b);
}

async function extras(d, sid, k, times, snaps, what, support) {
    // morphWeights and boundsConservative, when the daemon has them.
    for (const out of ["morphWeights", "boundsConservative"]) {
        if (support[out] === false) continue;
        const r = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { ...(k === null ? {} : { animation: k }), times, output: ["bounds", out] });
        if (support[out] === undefined) {
            support[out] = r.status === 200;
            if (!support[out]) {
                say(`# "${out}": the daemon answers ${r.status}; not checked`);
                continue;
            }
        }
        const res = parse(r.body)?.results;
        if (!check(`${what} "${out}" answers every time`, r.status === 200 && Array.isArray(res) && res.length === times.length, `${r.status} ${r.body.toString().slice(0, 200)}`)) continue;
        res.forEach((a, i) => {
            const snap = snaps[i];
            if (out === "morphWeights") {
                const got = new Map((a.morphWeights ?? []).map((m) => [m.mesh, m.weights]));
                for (const [mesh, w] of snap.morphWeights) {
                    const g = got.get(mesh);
                    const ok = Array.isArray(g) && g.length === w.length && g.every((x, j) => x === w[j] || Math.fround(x) === Math.fround(w[j]));
                    check(`${what} t=${times[i]} morphWeights ${mesh}`, ok, `daemon ${JSON.stringify(g)}, Babylon ${JSON.stringify(w)}`);
                }
            } else {
                const boxes = a.boundsConservative;
                if (!check(`${what} t=${times[i]} boundsConservative is an array`, Array.isArray(boxes))) return;
                for (const p of snap.primitives) {
                    const box = boxes.find((b) => b.primitive === p.primitive) ?? (boxes.length === 1 && !boxes[0].primitive ? boxes[0] : null);
                    const ok = box && [0, 1, 2].every((c) => box.min[c] <= p.min[c] && box.max[c] >= p.max[c]);
                    check(`${what} t=${times[i]} boundsConservative of ${p.primitive} contains the exact box`, !!ok,
                        `conservative ${JSON.stringify(box)}, exact ${JSON.stringify([p.min, p.max])}`);
                }
            }
        });
    }
}

async function runAsset(d, tests, entry, quick, full, support) {
    const [file, skinText] = entry.split("@");
    const skin = Number(skinText ?? 0);
    const sid = entry.replace(/[^A-Za-z0-9._-]/g, "_");
    const bytes = readFileSync(join(tests, "data", file));
    const glb = file.endsWith(".glb");
    const up = await req(d, "PUT", `/v1/skeletons/${sid}${skinText ? `?skin=${skin}` : ""}`, bytes, glb ? "model/gltf-binary" : "model/gltf+json");
    if (!check(`PUT ${file}`, up.status === 201 || up.status === 200, `${up.status} ${up.body.toString().slice(0, 300)}`)) return;
    const json = parseGlbJson(bytes);
    const asset = await loadAsset(join(tests, "data", file));
    asset.skin = skin;
    const groups = asset.scene.animationGroups;
    try {
        // The rest pose.
        const rest = babylonPoses(asset, [{ group: null, time: 0 }])[0];
        const r = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { output: OUT });
        check(`${file} rest pose`, r.status === 200 && !compareAnswer(parse(r.body), rest), r.status === 200 ? compareAnswer(parse(r.body), rest) : `${r.status} ${r.body.toString().slice(0, 300)}`);
        const anims = json.animations ?? [];
        // make check keeps to 3 clips of the big meshes (mannequiny: 11 clips, ~80 s); --full
        // takes every clip of every asset.
        const verts = rest.primitives.reduce((n, q) => n + q.positions.length / 3, 0);
        const clips = quick ? anims.slice(0, 2) : !full && verts > BIG_MESH ? anims.slice(0, 3) : anims;
        if (clips.length < anims.length) say(`# ${file}: ${verts} vertices, ${clips.length} of ${anims.length} clips (--full for all)`);
        for (let k = 0; k < clips.length; k++) {
            const name = anims[k].name || `animation${k}`;
            const group = groups.find((g) => g.name === name);
            if (!group) {
                check(`${file} clip ${k}: Babylon has an animation group for it`, false);
                continue;
            }
            const what = `${file} clip ${k} (${name})`;
            const times = clipTimes(group.to / FPS, quick);
            const snaps = babylonPoses(asset, times.map((time) => ({ group, time })));
            // One /pose per time.
            const singles = [];
            for (let i = 0; i < times.length; i++) {
                const s = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { animation: k, time: times[i], output: OUT });
                singles.push(s.body);
                const why = s.status === 200 ? compareAnswer(parse(s.body), snaps[i]) : `${s.status} ${s.body.toString().slice(0, 300)}`;
                check(`${what} /pose t=${times[i]}`, !why, why);
            }
            const joined = Buffer.concat([Buffer.from('{"results":['), ...singles.flatMap((b, i) => (i ? [Buffer.from(","), b] : [b])), Buffer.from("]}")]);
            // One /poses batch of the same poses.
            const batch = await req(d, "POST", `/v1/skeletons/${sid}/poses`, { poses: times.map((time) => ({ animation: k, time, output: OUT })) });
            check(`${what} /poses batch equals the singles bit for bit`, batch.status === 200 && batch.body.equals(joined), `${batch.status} ${batch.body.toString().slice(0, 200)}`);
            // A "times" range.
            const range = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { animation: k, times, output: OUT });
            if (!(range.status === 200 && range.body.equals(joined))) {
                const res = parse(range.body)?.results;
                const why = range.status !== 200 ? `${range.status} ${range.body.toString().slice(0, 300)}` : !Array.isArray(res) || res.length !== times.length ? "wrong result count"
                    : res.map((a, i) => compareAnswer(a, snaps[i]) && `t=${times[i]} ${compareAnswer(a, snaps[i])}`).find(Boolean) ?? "numbers equal Babylon's, bytes differ from the singles";
                check(`${what} "times" range equals the singles`, false, why);
            } else check(`${what} "times" range`, true);
            // "loop": true past the end: frame fmod(time * 60, end frame) (docs/clips.md), as
            // Babylon's goToFrame of that frame.
            if (group.to > 0) {
                const lt = [group.to / FPS * 1.37, group.to / FPS * 2.5 + 0.01];
                const ls = lt.map((t) => ({ group, frame: (t * FPS) % group.to }));
                const lsnaps = babylonPoses(asset, ls);
                for (let i = 0; i < lt.length; i++) {
                    const r = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { animation: k, time: lt[i], loop: true, output: OUT });
                    const why = r.status === 200 ? compareAnswer(parse(r.body), lsnaps[i]) : `${r.status} ${r.body.toString().slice(0, 300)}`;
                    check(`${what} /pose loop t=${lt[i]}`, !why, why);
                }
            }
            // A "from"/"to"/"fps" range over the clip.
            const from = 0;
            const to = group.to / FPS;
            const fps = quick || verts > BIG_MESH ? 3 : 11;
            const fr = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { animation: k, from, to, fps, output: OUT });
            const res = parse(fr.body)?.results;
            if (check(`${what} from/to/fps range answers`, fr.status === 200 && Array.isArray(res), `${fr.status} ${fr.body.toString().slice(0, 300)}`)) {
                const n = res.length;
                check(`${what} from/to/fps range frame count`, n >= 1 && from + (n - 1) / fps <= to && from + n / fps > to, `${n} frames`);
                const ft = res.map((_, f) => from + f / fps);
                const fs = babylonPoses(asset, ft.map((time) => ({ group, time })));
                const why = res.map((a, f) => compareAnswer(a, fs[f]) && `frame ${f} (t=${ft[f]}) ${compareAnswer(a, fs[f])}`).find(Boolean);
                check(`${what} from/to/fps range equals Babylon`, !why, why);
                await extras(d, sid, k, ft, fs, what, support);
                if (full || verts <= BIG_MESH) await everyFrame(d, sid, k, group, asset, what, support);
            }
        }
        if (anims.length >= 2) await layerForms(d, sid, file, asset, anims, groups);
        if (anims.length === 0) await extras(d, sid, null, [0], [rest], `${file} rest`, support);
    } finally {
        asset.scene.dispose();
        asset.engine.dispose();
        await req(d, "DELETE", `/v1/skeletons/${sid}`);
    }
}

/**
 * Every frame of the clip at 60 fps (Babylon's frame rate), frame f at f / 60: "bounds"
 * equal to Babylon's, and "boundsConservative" (when the daemon has it) containing them.
 */
async function everyFrame(d, sid, k, group, asset, what, support) {
    const { scene, restore } = asset;
    const sk = scene.skeletons.find((s) => s.id === `skeleton${asset.skin}`);
    const meshes = scene.meshes.filter((m) => m.skeleton === sk && m.getTotalVertices() > 0 && m.getVerticesData("matricesIndices"));
    const frames = Math.floor(group.to) + 1;
    const outs = support.boundsConservative ? ["bounds", "boundsConservative"] : ["bounds"];
    let bad = null;
    let loose = null;
    for (let c = 0; c < frames && !bad; c += 512) {
        const times = [];
        for (let f = c; f < Math.min(frames, c + 512); f++) times.push(f / FPS);
        const r = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { animation: k, times, output: outs });
        const res = parse(r.body)?.results;
        if (r.status !== 200 || !Array.isArray(res) || res.length !== times.length) {
            bad = `${r.status} ${r.body.toString().slice(0, 200)}`;
            break;
        }
        restore();
        group.start(false, 1, group.from, group.to);
        group.pause();
        times.forEach((t, i) => {
            if (bad) return;
            group.goToFrame(t * FPS);
            sk.prepare(true);
            for (const m of meshes) {
                m.refreshBoundingInfo(true, true);
                const bb = m.getBoundingInfo().boundingBox;
                const min = [bb.minimum.x, bb.minimum.y, bb.minimum.z];
                const max = [bb.maximum.x, bb.maximum.y, bb.maximum.z];
                const ptr = (m._internalMetadata?.gltf?.pointers ?? []).find((x) => /^\/meshes\/\d+\/primitives\/\d+$/.test(x));
                const b = (res[i].bounds ?? []).find((x) => x.primitive === ptr);
                const why = !b ? `no bounds for ${ptr}` : firstDiff(b.min, min, 0) ?? firstDiff(b.max, max, 0);
                if (why) bad = `frame ${c + i} (t=${t}) ${ptr} ${why}`;
                if (outs.length === 2 && !loose) {
                    const cb = (res[i].boundsConservative ?? []).find((x) => x.primitive === ptr) ?? res[i].boundsConservative?.[0];
                    if (!cb || ![0, 1, 2].every((j) => cb.min[j] <= min[j] && cb.max[j] >= max[j]))
                        loose = `frame ${c + i} (t=${t}) ${ptr}: conservative ${JSON.stringify(cb)}, exact ${JSON.stringify([min, max])}`;
                }
            }
        });
        group.stop();
    }
    restore();
    check(`${what} "bounds" on every frame (${frames} at 60 fps)`, !bad, bad);
    if (outs.length === 2) check(`${what} "boundsConservative" contains the exact box on every frame`, !loose, loose);
}

/**
 * A layered answer against Babylon. When the daemon's "final" matrices already differ from
 * Babylon's (the layer blend, not the mesh: main's skinnerd does this for 3 layers of
 * RobotExpressive), the vertices cannot match: that pose is counted as known, printed, and
 * its vertices are not compared.
 */
function layerDiff(ans, snap, what) {
    const fin = ans?.final;
    if (Array.isArray(fin) && fin.length === snap.final.length) {
        let n = 0;
        let worst = 0;
        fin.forEach((x, i) => {
            if (!Object.is(Math.fround(x), snap.final[i])) {
                n++;
                worst = Math.max(worst, ulps(Math.fround(x), snap.final[i]));
            }
        });
        if (n) {
            known++;
            say(`# KNOWN (the layer blend, not the mesh): ${what}: "final" differs from Babylon in ${n} of ${fin.length} numbers (up to ${worst} ulps); vertices not compared`);
            return null;
        }
    } else return `no "final" of ${snap.final.length} numbers`;
    return compareAnswer(ans, snap);
}

/** Weighted glTF layers (weights adding up to 1): one /pose each and a "times" range. */
async function layerForms(d, sid, file, asset, anims, groups) {
    const group = (k) => groups.find((g) => g.name === (anims[k].name || `animation${k}`));
    const specs = [[[0, 0.3, 0.7], [1, 0.2, 0.3]], [[1, 0.55, 0.5], [0, 1.1, 0.5]]];
    if (anims.length >= 3) specs.push([[0, 0.4, 0.2], [1, 0.25, 0.5], [2, 0.6, 0.3]]);
    for (const spec of specs) {
        const what = `${file} layers ${JSON.stringify(spec)}`;
        const layers = spec.map(([k, time, weight]) => ({ animation: k, time, weight }));
        const snap = babylonPoses(asset, [{ group: null, time: 0, layers: spec.map(([k, time, weight]) => ({ group: group(k), time, weight })) }])[0];
        const r = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { layers, output: ["final", ...OUT] });
        const why = r.status === 200 ? layerDiff(parse(r.body), snap, `${what} /pose`) : `${r.status} ${r.body.toString().slice(0, 300)}`;
        check(`${what} /pose`, !why, why);
        // The same layers as a range: frame times are offsets added to each layer's time.
        const offs = [0, 0.1, 0.35];
        const snaps = babylonPoses(asset, offs.map((o) => ({ group: null, time: 0, layers: spec.map(([k, time, weight]) => ({ group: group(k), time: time + o, weight })) })));
        const rr = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { layers, times: offs, output: ["final", ...OUT] });
        const res = parse(rr.body)?.results;
        const w = rr.status !== 200 ? `${rr.status} ${rr.body.toString().slice(0, 300)}` : !Array.isArray(res) || res.length !== offs.length ? "wrong result count"
            : res.map((a, i) => { const x = layerDiff(a, snaps[i], `${what} "times" offset ${offs[i]}`); return x && `offset ${offs[i]} ${x}`; }).find(Boolean);
        check(`${what} "times" range`, !w, w);
    }
}

const BAD = ["joint_past_end", "joint_identity", "nan_position", "weights_half", "weights_negative", "weights_zero",
    "targets_mismatch", "no_skin_attrs"];

/**
 * tests/data/mesh_bad/*.glb (make_mesh_assets.mjs): skinnerd either refuses the upload with
 * a 4xx problem naming a JSON pointer, or answers Babylon's numbers; where Babylon's loader
 * throws or its vertices hold NaN (which JSON cannot carry), it must refuse.
 */
async function badInputs(d, tests) {
    const tmp = mkdtempSync(join(tmpdir(), "conformance-mesh-"));
    try {
        await badInputsIn(d, tests, tmp);
    } finally {
        rmSync(tmp, { recursive: true, force: true });
    }
}

async function badInputsIn(d, tests, tmp) {
    for (const name of BAD) {
        const file = join(tests, "data", "mesh_bad", `${name}.glb`);
        const what = `mesh_bad/${name}.glb`;
        // In a child process: a failed load leaves Babylon promises that throw later.
        const rq = join(tmp, `${name}.json`);
        writeFileSync(rq, JSON.stringify({ file, skin: 0, poses: [{ animation: null, time: 0 }, { animation: 0, time: 0.5 }] }));
        const child = spawnSync(process.execPath, [join(here, "babylon_mesh.mjs"), "--requests", rq], { encoding: "utf8", maxBuffer: 1 << 26 });
        const asset = child.status === 0;
        let snaps = null;
        let nan = false;
        if (asset) {
            const unnull = (a) => (a ? a.map((x) => (x === null ? NaN : x)) : null);
            snaps = child.stdout.trim().split("\n").map((l) => JSON.parse(l)).map((sn) => ({
                primitives: sn.primitives.map((p) => ({ ...p, positions: unnull(p.positions), normals: unnull(p.normals) })),
            }));
            nan = snaps.some((sn) => sn.primitives.some((p) => p.skinned && [p.positions, p.normals ?? []].some((a) => a.some((x) => Number.isNaN(x)))));
        }
        const sid = `bad_${name}`;
        const up = await req(d, "PUT", `/v1/skeletons/${sid}`, readFileSync(file), "model/gltf-binary");
        const prob = parse(up.body);
        if (up.status >= 400 && up.status < 500) {
            check(`${what}: refused with a problem naming a pointer`, typeof prob?.pointer === "string" && prob.pointer !== "", up.body.toString().slice(0, 300));
            say(`# ${what}: ${up.status} at ${prob?.pointer}: ${prob?.detail}`);
            continue;
        }
        if (!check(`${what}: uploads (${up.status}) or is refused with a 4xx`, up.status === 200 || up.status === 201, up.body.toString().slice(0, 300))) continue;
        if (!asset) check(`${what}: Babylon's loader refuses it, so must skinnerd`, false);
        else if (nan) check(`${what}: Babylon's vertices hold NaN here, so skinnerd must refuse the upload (422 naming the accessor)`, false);
        else {
            const r0 = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { output: OUT });
            const r1 = await req(d, "POST", `/v1/skeletons/${sid}/pose`, { animation: 0, time: 0.5, output: OUT });
            const why = [r0, r1].map((r, i) => (r.status === 200 ? compareAnswer(parse(r.body), snaps[i]) : `${r.status} ${r.body.toString().slice(0, 200)}`)).find(Boolean);
            check(`${what}: accepted, so Babylon's numbers (rest and t=0.5)`, !why, why);
            say(`# ${what}: accepted, answers ${why ? "differ from" : "equal"} Babylon's`);
        }
        await req(d, "DELETE", `/v1/skeletons/${sid}`);
    }
}

function parseGlbJson(bytes) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (dv.getUint32(0, true) !== 0x46546c67) return JSON.parse(bytes.toString("utf8"));
    const len = dv.getUint32(12, true);
    return JSON.parse(bytes.subarray(20, 20 + len).toString("utf8"));
}

async function main(argv) {
    const quick = argv.includes("--quick");
    const full = argv.includes("--full");
    const pick = [];
    const pos = [];
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === "--asset") pick.push(argv[++i]);
        else if (argv[i] !== "--quick" && argv[i] !== "--full") pos.push(argv[i]);
    }
    if (pos.length !== 2) {
        console.error("usage: conformance_mesh.mjs SKINNERD TESTS_DIR [--quick | --full] [--asset NAME.glb]...");
        return 2;
    }
    const [bin, tests] = pos;
    const d = await startDaemon(bin);
    try {
        // Does this daemon know the mesh outputs?
        const probe = readFileSync(join(tests, "data", "skin_mirror.glb"));
        await req(d, "PUT", "/v1/skeletons/probe", probe, "model/gltf-binary");
        const p = await req(d, "POST", "/v1/skeletons/probe/pose", { output: ["vertices"] });
        const body = parse(p.body);
        if (p.status >= 400 && p.status < 500 && typeof body?.pointer === "string" && body.pointer.startsWith("/output")) {
            say(`conformance-mesh: SKIP: this skinnerd does not know the "vertices" output (${p.status} at ${body.pointer}: ${body.detail})`);
            return 77;
        }
        await req(d, "DELETE", "/v1/skeletons/probe");
        const support = {};
        for (const file of pick.length ? pick.filter((x) => x !== "bad") : ASSETS) {
            const t0 = Date.now();
            const before = passed + failed;
            const failedBefore = failed;
            await runAsset(d, tests, file, quick, full, support);
            say(`# ${file}: ${passed + failed - before} checks, ${failed - failedBefore} failed, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        }
        if (!pick.length || pick.includes("bad")) await badInputs(d, tests);
    } finally {
        await stopDaemon(d);
        agent.destroy();
    }
    if (failed > MAX_REPORT) say(`... ${failed - MAX_REPORT} more failures not shown`);
    say(`conformance-mesh: ${passed} passed, ${failed} failed (${numbers} numbers compared${known ? `; ${known} layered poses whose matrices already differ` : ""})`);
    return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
