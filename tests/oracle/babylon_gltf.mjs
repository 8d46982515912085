#!/usr/bin/env node
// Babylon.js oracle for glTF skins and animations: loads a .glb/.gltf with
// @babylonjs/loaders (NullEngine, from an ArrayBuffer: no network) and prints,
// for every skin Babylon builds, the skinning matrices at rest and for every
// animation at several times, as Babylon computes them.
//
//   node babylon_gltf.mjs [--lite] FILE [NAME]   > tests/gltf/expected/NAME.json
//   node babylon_gltf.mjs --regenerate            rewrites every committed answer
//                                                  (tests/gltf/expected/*.json)
//
// npm install (in tests/oracle) fetches the pinned @babylonjs/core and
// @babylonjs/loaders first. The hand-made inputs come from
// tests/data/gltf/make_cases.mjs.
//
// --lite keeps the committed answers of big assets small: four times per
// animation (before the start, between keys, on a key, past the end), and
// for every skin after the first only the rest pose and the first animation.
//
// How each number is produced (read from @babylonjs/loaders 9.28.0
// glTF/2.0/glTFLoader.pure.js and @babylonjs/core Animations/, Bones/):
//  * the loader builds one Skeleton per skin used by a mesh node, bones
//    linked to the nodes' TransformNodes; animation groups are created
//    stopped (animationStartMode NONE) and normalized to start at frame 0;
//  * for each group: every linked node is put back to its loaded TRS, the
//    group is started and paused, goToFrame(time * 60) sets the animated
//    node TRS (RuntimeAnimation clamps to the key range), and
//    skeleton.prepare(true) copies node TRS into the bones and recomputes the
//    matrices. prepare(true), not prepare(): without a render loop the
//    render id never changes and a second prepare() would return early.
//  * "final" is skeleton._transformMatrices: 16 * (bones + 1) floats.
//  * "layers" (first skin of files with two or more animations): groups
//    started together with weights adding up to 1, goToFrame(frame, true),
//    then scene._animate() runs Babylon's late animation bindings, which
//    blend the weighted values (see sampleLayers).
//
// Numbers are exact: each float32 as its shortest round-tripping decimal,
// -0 as -0.0; the tests compare them bit for bit.

import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

import { FPS, loadBytes, saveNodes } from "./babylon_common.mjs";

// Each float32 as the shortest decimal that reads back (through a double,
// as jansson and Python read it) as the same float32; -0 keeps its sign
// (NEG0, written as -0.0 by the last stringify).
const NEG0 = "\u0000-0\u0000";
const FMT = (x) => {
    x = Math.fround(x);
    if (x === 0) return Object.is(x, -0) ? NEG0 : 0;
    for (let p = 1; ; p++) {
        const v = Number(x.toPrecision(p));
        if (Math.fround(v) === x) return v;
    }
};
const arr = (a) => Array.from(a, FMT);

function readVersions() {
    const v = (p) => JSON.parse(readFileSync(new URL(`./node_modules/${p}/package.json`, import.meta.url))).version;
    return { core: v("@babylonjs/core"), loaders: v("@babylonjs/loaders") };
}

/** Sample times for one group: before the start, the start, a key, between keys (9 more unless lite), the end, past the end. */
function sampleTimes(group, gltfAnim, gltf, readTimes, lite) {
    const end = group.to / FPS;
    const times = new Set(lite ? [-0.25, end + 0.5] : [-0.25, 0, end, end + 0.5]);
    // Key times of the longest sampler input, exactly as float32 values.
    let best = null;
    for (const s of gltfAnim.samplers) {
        const t = readTimes(s.input);
        if (!best || t.length > best.length) best = t;
    }
    if (best && best.length >= 2) {
        const n = best.length;
        times.add(best[Math.floor(n / 2)]); // on a key
        const j = Math.floor(n / 3);
        times.add((best[j] + best[Math.min(j + 1, n - 1)]) / 2); // between keys
        if (!lite) times.add(best[0] + (best[n - 1] - best[0]) * 0.618); // somewhere else
        // Eight more between keys, spread over the clip: interpolation's rounding at many weights.
        if (!lite) for (let k = 0; k < 8; k++) times.add(best[0] + (best[n - 1] - best[0]) * ((k + 0.3819) / 8));
    }
    return [...times].sort((a, b) => a - b);
}

/**
 * Weighted layers through Babylon's own blending: each group started and
 * paused with its weight, goToFrame(frame, useWeight = true) registers the
 * values for late binding, and scene._animate() (its animatables are paused,
 * so nothing moves) runs ProcessLateAnimationBindings, which blends them:
 * vectors by normalised weights, quaternions by cumulative slerp. Weights
 * given here add up to 1.
 */
function sampleLayers(scene, sk, groups, restore) {
    const specs = [
        [[0, 0.3, 0.7], [1, 0.2, 0.3]],
        [[1, 0.55, 0.5], [0, 1.1, 0.5]],
    ];
    if (groups.length >= 3) specs.push([[0, 0.4, 0.2], [1, 0.25, 0.5], [2, 0.6, 0.3]]);
    const out = [];
    for (const spec of specs) {
        restore();
        for (const [gi, t, w] of spec) {
            const g = groups[gi];
            g.start(false, 1, g.from, g.to);
            g.pause();
            g.weight = w;
        }
        for (const [gi, t] of spec) groups[gi].goToFrame(t * FPS, true);
        scene._animate();
        sk.prepare(true);
        out.push({
            layers: spec.map(([gi, t, w]) => ({ animation: groups[gi].name, time: t, weight: w })),
            final: arr(sk._transformMatrices),
        });
        for (const [gi] of spec) {
            groups[gi].stop();
            groups[gi].weight = -1;
        }
    }
    restore();
    return out;
}

/** Minimal reader for the key times (the oracle must know where keys are). */
function makeTimeReader(json, bin, dataUris) {
    return (accIndex) => {
        const acc = json.accessors[accIndex];
        const bv = json.bufferViews[acc.bufferView];
        const buf = json.buffers[bv.buffer].uri ? dataUris[bv.buffer] : bin;
        const off = (bv.byteOffset || 0) + (acc.byteOffset || 0);
        const stride = bv.byteStride || 4;
        const dv = new DataView(buf.buffer, buf.byteOffset);
        const out = [];
        for (let i = 0; i < acc.count; i++) out.push(dv.getFloat32(off + i * stride, true));
        return out;
    };
}

function parseContainer(bytes) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.byteLength >= 12 && dv.getUint32(0, true) === 0x46546c67) {
        let at = 12;
        let json = null;
        let bin = null;
        while (at + 8 <= bytes.byteLength) {
            const len = dv.getUint32(at, true);
            const type = dv.getUint32(at + 4, true);
            const body = bytes.subarray(at + 8, at + 8 + len);
            if (type === 0x4e4f534a) json = JSON.parse(new TextDecoder().decode(body));
            else if (type === 0x004e4942) bin = body;
            at += 8 + len;
        }
        return { json, bin, ext: ".glb" };
    }
    return { json: JSON.parse(new TextDecoder().decode(bytes)), bin: null, ext: ".gltf" };
}

async function main(argv) {
    const lite = argv[0] === "--lite";
    if (lite) argv = argv.slice(1);
    if (argv.length < 1 || argv.length > 2) {
        console.error("usage: babylon_gltf.mjs [--lite] FILE [NAME]");
        return 2;
    }
    const bytes = new Uint8Array(readFileSync(argv[0]));
    const { json, bin, ext } = parseContainer(bytes);
    const dataUris = (json.buffers || []).map((b) => {
        if (!b.uri) return null;
        const m = /^data:[^,]*;base64,(.*)$/s.exec(b.uri);
        if (!m) throw new Error("only data: URIs are supported");
        return new Uint8Array(Buffer.from(m[1], "base64"));
    });
    const readTimes = makeTimeReader(json, bin, dataUris);

    const { engine, scene } = await loadBytes(bytes, ext);

    const out = {
        asset: argv[1] ?? basename(argv[0]),
        generator: "tests/oracle/babylon_gltf.mjs",
        babylon: readVersions(),
        skins: [],
    };

    // Every TransformNode as loaded: animations are sampled from this state.
    const restore = saveNodes(scene);

    const skeletons = scene.skeletons
        .map((sk) => ({ sk, skin: Number(/^skeleton(\d+)$/.exec(sk.id)?.[1]) }))
        .sort((a, b) => a.skin - b.skin);
    const groups = scene.animationGroups;
    const gltfAnimIndex = (g) => {
        const named = (json.animations || []).findIndex((a, k) => (a.name || `animation${k}`) === g.name);
        return named;
    };

    for (const { sk, skin } of skeletons) {
        const entry = {
            skin,
            bones: sk.bones.map((b) => b.name),
            index: sk.bones.map((b) => b._index),
        };
        restore();
        sk.prepare(true);
        entry.rest = arr(sk._transformMatrices);
        entry.animations = [];
        for (const g of lite && out.skins.length > 0 ? groups.slice(0, 1) : groups) {
            const k = gltfAnimIndex(g);
            if (k < 0) throw new Error(`animation group ${g.name} not found in the file`);
            restore();
            g.start(false, 1, g.from, g.to);
            g.pause();
            const samples = [];
            for (const t of sampleTimes(g, json.animations[k], json, readTimes, lite)) {
                g.goToFrame(t * FPS);
                sk.prepare(true);
                samples.push({ time: t, final: arr(sk._transformMatrices) });
            }
            g.stop();
            entry.animations.push({ animation: k, name: g.name, end: g.to / FPS, samples });
        }
        if (out.skins.length === 0 && groups.length >= 2) entry.layers = sampleLayers(scene, sk, groups, restore);
        out.skins.push(entry);
    }
    restore();
    process.stdout.write(JSON.stringify(out).replaceAll(JSON.stringify(NEG0), "-0.0") + "\n");
    scene.dispose();
    engine.dispose();
    return 0;
}

// The committed answers: [file under tests/data, lite].
const COMMITTED = [
    ["Fox.glb", false], ["CesiumMan.glb", false], ["RiggedSimple.glb", false], ["RiggedFigure.glb", false],
    ["SimpleSkin.gltf", false], ["SimpleSkin-multi-target.gltf", false],
    ["RobotExpressive.glb", true], ["mannequiny-0.3.0.glb", true],
    ["RecursiveSkeletons.glb", true],
    ["gltf/no_ibm.gltf", false], ["gltf/nonjoint_between.gltf", false], ["gltf/above_root.gltf", false],
    ["gltf/mesh_transform.gltf", false], ["gltf/cubic_step.gltf", false], ["gltf/scales.gltf", false],
    ["gltf/accessors.gltf", false],
];

function regenerate() {
    // One process per asset: a fresh engine and scene each time.
    const self = fileURLToPath(import.meta.url);
    const tests = fileURLToPath(new URL("..", import.meta.url));
    for (const [file, lite] of COMMITTED) {
        const name = basename(file).replace(/\.(glb|gltf)$/, "");
        const args = [self, ...(lite ? ["--lite"] : []), `${tests}/data/${file}`, basename(file)];
        const text = execFileSync(process.execPath, args, { maxBuffer: 1 << 28 });
        writeFileSync(`${tests}/gltf/expected/${name}.json`, text);
        console.error(`babylon_gltf: ${name}.json`);
    }
    return 0;
}

process.exitCode = process.argv[2] === "--regenerate" ? regenerate() : await main(process.argv.slice(2));
