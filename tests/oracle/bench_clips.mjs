#!/usr/bin/env node
// Babylon.js's rate on a clip, for `make bench-clips`: loads a .glb with
// @babylonjs/loaders (NullEngine, from the bytes), starts and pauses the
// clip's AnimationGroup, then for frames k / 60 s of the clip (looping, the
// frames `skinner bench --clips` samples) calls group.goToFrame(frame) and
// skeleton.prepare(true), as tests/oracle/babylon_gltf.mjs does to compute
// its answers. A .json file is a skeleton in Babylon's format with bone
// animations and ranges (tests/data/fox-walk-babylon.json): the range is
// begun on the skeleton and its Animatable goes to the frames instead. Prints one JSON line: bone matrices per CPU-second (median of
// the repetitions), frames per CPU-second, bones.
//
//   node bench_clips.mjs FILE.glb|FILE.gltf|FILE.json CLIP [--quick]
//
// CLIP is the group's (range's) name or its index. npm install in tests/oracle first.

import { readFileSync } from "node:fs";

import { B, loadBytes } from "./babylon_common.mjs";

const [file, clip, ...rest] = process.argv.slice(2);
if (!file || clip === undefined) {
    console.error("usage: bench_clips.mjs FILE.glb CLIP [--quick]");
    process.exit(2);
}
const quick = rest.includes("--quick");

let engine, scene;
const bytes = new Uint8Array(readFileSync(file));
let sk, g, endFrame, fromFrame = 0;
if (file.toLowerCase().endsWith(".json")) {
    // A skeleton in Babylon's format (make_babylon_clip.mjs): Skeleton.Parse,
    // each bone's "animations" list parsed onto it (skinnerd's extension:
    // Parse reads one "animation"), then skeleton.beginAnimation(range)
    // and Animatable.goToFrame, as babylon_eval.mjs plays such clips.
    engine = new B.NullEngine();
    scene = new B.Scene(engine);
    const spec = JSON.parse(Buffer.from(bytes).toString("utf8"));
    sk = B.Skeleton.Parse(spec, scene);
    spec.bones.forEach((b, i) => {
        for (const a of b.animations ?? []) sk.bones[i].animations.push(B.Animation.Parse(a));
    });
    const range = sk.getAnimationRange(clip) ?? spec.ranges?.[Number(clip)];
    if (!range) {
        console.error(`bench_clips.mjs: ${file}: no range ${clip}`);
        process.exit(2);
    }
    const anim = sk.beginAnimation(range.name, false);
    anim.pause();
    g = { name: range.name, goToFrame: (f) => anim.goToFrame(f), stop: () => anim.stop() };
    fromFrame = range.from;
    endFrame = range.to - range.from;
} else {
    ({ engine, scene } = await loadBytes(bytes, file.toLowerCase().endsWith(".gltf") ? ".gltf" : ".glb"));
    sk = scene.skeletons[0];
    const groups = scene.animationGroups;
    g = groups.find((x) => x.name === clip) ?? groups[Number(clip)];
    if (!sk || !g) {
        console.error(`bench_clips.mjs: ${file}: no skeleton or no clip ${clip}`);
        process.exit(2);
    }
    g.start(false, 1, g.from, g.to);
    g.pause();
    endFrame = g.to;
}

const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
};
const reps = quick ? 3 : 7, budget = quick ? 0.1 : 0.3;
const rates = [];
let k = 0;
// Repetition 0 warms the JIT up and is not counted.
for (let r = -1; r < reps; r++) {
    let frames = 0;
    const t0 = cpu();
    let t;
    do {
        for (let i = 0; i < 256; i++, k++) {
            // Frame k / 60 s, wrapped into the clip as `--loop` wraps it.
            const frame = fromFrame + (endFrame > 0 ? k % endFrame : 0);
            g.goToFrame(frame);
            sk.prepare(true);
        }
        frames += 256;
    } while ((t = cpu() - t0) < budget);
    if (r >= 0) rates.push(frames / t);
}
rates.sort((a, b) => a - b);
const fps = rates[Math.floor(reps / 2)];
process.stdout.write(JSON.stringify({ file, clip: g.name, bones: sk.bones.length, frames_per_s: fps,
                                      rate: fps * sk.bones.length }) + "\n");
g.stop();
scene.dispose();
engine.dispose();
