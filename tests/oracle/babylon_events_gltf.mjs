#!/usr/bin/env node
// Babylon.js oracle for a glTF clip's markers (skinnerd's extension:
// animations[i].extras.markers [{name, frame | time}]) as AnimationEvents:
// each case writes a copy of a real asset (Fox, CesiumMan, RobotExpressive)
// with markers on one clip into OUTDIR, adds the same events (frame, or
// time * 60 as the loader's frames are) to the clip's AnimationGroup
// animation that spans the group's range, starts the group
// (start(loop, 1, from, to)) and steps it by scene._animate, each
// animatable's clock at exactly (pose time) * 1000 ms. Writes one `skinner
// eval` case a line (the skeleton an absolute path into OUTDIR) with the
// events Babylon fired at every pose, as babylon_events.mjs does:
//
//   node babylon_events_gltf.mjs OUTDIR [SEED] [COUNT] > cases.jsonl
//
// npm install in tests/oracle first.
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

import { B, drawSteps, fireSteps, loadBytes, seeded } from "./babylon_common.mjs";

const { NullEngine, AnimationEvent } = B;

const outdir = resolve(process.argv[2]);
const seed = Number(process.argv[3] ?? 34);
const count = Number(process.argv[4] ?? 12);
const rnd = seeded(seed);
const { r, pick, int } = rnd;

/** The GLB's JSON and binary chunks. */
function unpack(bytes) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const jlen = dv.getUint32(12, true);
    const json = JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + jlen)));
    const bin = bytes.subarray(20 + jlen);
    return { json, bin };
}
function pack(json, bin) {
    let text = new TextEncoder().encode(JSON.stringify(json));
    const pad = (4 - (text.length % 4)) % 4;
    const j = new Uint8Array(text.length + pad).fill(0x20);
    j.set(text);
    const out = new Uint8Array(12 + 8 + j.length + bin.length);
    const dv = new DataView(out.buffer);
    dv.setUint32(0, 0x46546c67, true);
    dv.setUint32(4, 2, true);
    dv.setUint32(8, out.length, true);
    dv.setUint32(12, j.length, true);
    dv.setUint32(16, 0x4e4f534a, true);
    out.set(j, 20);
    out.set(bin, 20 + j.length);
    return out;
}

const engine = new NullEngine();
const ASSETS = ["Fox.glb", "CesiumMan.glb", "RobotExpressive.glb"];
const loaded = {};
async function load(name) {
    if (loaded[name]) return loaded[name];
    const bytes = new Uint8Array(readFileSync(new URL(`../data/${name}`, import.meta.url)));
    const { scene } = await loadBytes(bytes, ".glb", engine);
    return (loaded[name] = { bytes, scene, groups: scene.animationGroups.slice() });
}

for (let ci = 0; ci < count; ci++) {
    const asset = ASSETS[ci % ASSETS.length];
    const { bytes, scene, groups } = await load(asset);
    const gi = int(0, groups.length - 1);
    const g = groups[gi];
    // the animation spanning the group's range carries the events
    const ta = g.targetedAnimations.find(({ animation: a }) => {
        const k = a.getKeys();
        return k[0].frame <= g.from && k[k.length - 1].frame >= g.to;
    });
    if (!ta || g.from !== 0) {
        ci--; // skinnerd plays glTF clips from frame 0: such clips are not drawn
        continue;
    }
    const L = g.to;
    const fired = [];
    const markers = [];
    for (let e = int(1, 8); e > 0; e--) {
        const name = `m${markers.length}`;
        let m, frame;
        if (r() < 0.5) {
            const time = pick([Math.round(r() * (L / 60) * 1000) / 1000, 0, Math.round(L / 60 * 100) / 100]);
            m = { name, time };
            frame = time * 60;
        } else {
            frame = pick([int(0, Math.floor(L)), Math.round(r() * L * 4) / 4, 0, L]);
            m = { name, frame };
        }
        markers.push(m);
        ta.animation.addEvent(new AnimationEvent(frame, () => fired.push({ name, frame })));
    }
    const { json, bin } = unpack(bytes);
    json.animations[gi].extras = Object.assign({}, json.animations[gi].extras, { markers });
    const file = `${outdir}/events-${seed}-${ci}.glb`;
    writeFileSync(file, pack(json, bin));
    const loop = r() < 0.7;
    const pose = { op: "pose", animation: g.name, loop, events: true };
    const { steps, skip } = drawSteps(rnd, pose, 0.4, [24, 30, 60], 150);
    g.start(loop, 1, g.from, g.to);
    const ats = g.animatables.slice();
    const expected = fireSteps(scene, ats, steps, skip, fired);
    g.stop();
    ta.animation.getEvents().length = 0;
    const name = `markers ${seed}-${ci}: ${asset} clip ${g.name} (to ${L}), ${markers.length} markers, loop ${loop}, ${pose.times ? `${steps.length} times` : `frames ${pose.frames} at ${pose.fps}`}`;
    process.stdout.write(JSON.stringify({ name, case: { skeleton: { gltf: file }, ops: [pose] }, expected }) + "\n");
}
