#!/usr/bin/env node
// Babylon.js oracle for a layer's "blendIn", bit for bit: a glTF group
// started with enableBlending and blendingSpeed after another group's
// goToFrame left its pose on the nodes (or from the rest pose), then its
// goToFrame at each frame of the range in order: each write blends
// Lerp/Slerp(the pose it found, its value, factor), the factor 0 at the
// first write and blendingSpeed more at each. Writes `skinner eval` cases
// (tests/conformance/layers_blendin.jsonl, held bit for bit by
// tests/check_sk_blendin.c):
//
//   cd tests/oracle && node babylon_blendin.mjs > ../conformance/layers_blendin.jsonl
//
// With other layers (LAYER_CASES) the blended layer is one weighted group
// among others: its blended values go through the late animation bindings.
//
// A "frames" range [s, e) is played from frame 0 (writes 0..s-1 made and
// not kept): frame k is write k, as skinnerd counts it.

import { FPS, loadAsset, keepSign, line } from "./babylon_common.mjs";

// [asset, to group, to loop, speed, from: [group, time, loop] | null, range, speedRatio?]
// range: {times} | {from, to, fps} | {frames, fps}
const CASES = [
    ["data/Fox.glb", 1, true, 0.1, [2, 0.3, false], { times: [0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.1, 1.3, 2.5] }],
    ["data/Fox.glb", 2, true, 0.05, [0, 1.234, true], { from: 0, to: 1.5, fps: 30 }],
    ["data/Fox.glb", 0, false, 0.3, null, { from: 0, to: 0.5, fps: 24 }],
    ["data/Fox.glb", 1, true, 0.07, [2, 0.1, true], { frames: [5, 40], fps: 30 }],
    ["data/Fox.glb", 1, true, 0.07, [2, 0.1, true], { frames: [0, 40], fps: 30 }],
    ["data/CesiumMan.glb", 0, true, 0.125, null, { from: 0, to: 1, fps: 30 }],
    ["data/RobotExpressive.glb", 10, true, 0.04, [0, 0.5, true], { from: 0, to: 1.2, fps: 30 }],
    ["data/RobotExpressive.glb", 2, true, 0.2, [13, 0.25, false], { times: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6] }],
    ["data/RobotExpressive.glb", 13, false, 0.0625, [6, 0.7, true], { from: 0.1, to: 1, fps: 20 }],
    // with a speed ratio: played by animate (babylon_speed.mjs's clock), one scene step a frame
    ["data/Fox.glb", 1, true, 0.08, [2, 0.3, false], { from: 0, to: 1.2, fps: 30 }, 1.6],
    ["data/RobotExpressive.glb", 10, true, 0.1, [0, 0.5, true], { frames: [3, 30], fps: 24 }, 0.7],
];
// With other layers, every group weighted (skinnerd's weights, normalised when
// they add up to under 1): [asset, layers, speed, from, range], a layer
// [group, time, loop, weight], the first one blended in; each frame every
// group's goToFrame(frame, true) in layer order, then the scene's late
// animation bindings mix the blended values, the groups' original values
// being the snapshot's.
const LAYER_CASES = [
    ["data/Fox.glb", [[1, 0, true, 0.6], [2, 0.2, true, 0.4]], 0.1, [0, 0.3, true], { from: 0, to: 1, fps: 30 }],
    ["data/Fox.glb", [[2, 0, true, 1], [1, 0.1, true, 1]], 0.05, null, { frames: [0, 40], fps: 30 }],
    ["data/Fox.glb", [[2, 0, true, 1], [1, 0.1, true, 1]], 0.05, null, { frames: [7, 40], fps: 30 }],
    ["data/Fox.glb", [[0, 0, false, 0.2], [1, 0.3, true, 0.3]], 0.15, [2, 0.5, false], { times: [0, 0.1, 0.2, 0.3, 0.5, 0.8, 1, 1.2, 1.5] }],
    ["data/RobotExpressive.glb", [[10, 0, true, 0.5], [0, 0.2, true, 0.3], [2, 0.6, true, 0.2]], 0.08, [13, 0.25, false], { from: 0, to: 1, fps: 24 }],
    ["data/RobotExpressive.glb", [[3, 0, true, 1], [6, 0.4, true, 0.5]], 0.2, [0, 0.5, true], { frames: [2, 20], fps: 30 }],
    ["data/RobotExpressive.glb", [[2, 0.1, false, 0.4], [10, 0, true, 0.4], [0, 0.7, true, 0.4]], 0.0625, null, { from: 0.05, to: 1.2, fps: 20 }],
    ["data/CesiumMan.glb", [[0, 0, true, 0.7], [0, 0.5, true, 0.3]], 0.1, null, { from: 0, to: 0.8, fps: 30 }],
];

function rangeTimes(r) {
    if (r.times) return r.times.map((t, j) => [j, t]);
    const out = [];
    if (r.frames) {
        for (let k = 0; k < r.frames[1]; k++) out.push([k, k / r.fps]);
        return out;
    }
    const n = Math.floor((r.to - r.from) * r.fps + 1e-9) + 1; // checked against skinnerd's count below
    for (let j = 0; j < n; j++) out.push([j, r.from + j / r.fps]);
    return out;
}

const gltfFrame = (g, t, loop) => {
    let f = t * FPS;
    if (loop && g.to > 0) {
        f = f % g.to;
        if (f < 0) f += g.to;
    }
    return f;
};

/** The loaded pose, then the clip blended from (`from`: [group, time, loop]) posed, as the snapshot's source. */
function startFrom(groups, restore, from) {
    restore();
    if (from) {
        const gA = groups[from[0]];
        gA.start(false, 1, gA.from, gA.to);
        gA.goToFrame(gltfFrame(gA, from[1], from[2]));
        gA.stop();
    }
}
/** Every write of the range in order; the poses of the frames the range asks for. */
function play({ scene, sk, groups, restore }, [, bi, loop, speed, from, range, ratio]) {
    startFrom(groups, restore, from);
    const gB = groups[bi];
    gB.enableBlending = true;
    gB.blendingSpeed = speed;
    gB.start(loop, ratio ?? 1, gB.from, gB.to);
    if (ratio === undefined) gB.pause();
    const finals = [];
    const first = range.frames ? range.frames[0] : 0;
    for (const [k, t] of rangeTimes(range)) {
        if (ratio === undefined) gB.goToFrame(gltfFrame(gB, t, loop));
        else {
            for (const a of gB.animatables) {
                a._localDelayOffset = -(t * 1000);
                a._pausedDelay = null;
                a._manualJumpDelay = null;
            }
            scene._animationTime = 0;
            scene._animate(0);
        }
        if (k < first) continue;
        sk.prepare(true);
        finals.push(Array.from(sk._transformMatrices));
    }
    gB.stop();
    gB.enableBlending = false;
    return finals;
}
/** A layered case's writes in order; the poses of the frames the range asks for. */
function playLayers({ scene, sk, groups, restore }, [, layers, speed, from, range]) {
    startFrom(groups, restore, from);
    const total = layers.reduce((t, l) => t + l[3], 0);
    // A clip in two layers is two groups: the second a clone, as two groups of one clip would be.
    const used = layers.map(([gi], i) => (layers.findIndex((l) => l[0] === gi) < i ? groups[gi].clone(`${groups[gi].name}#${i}`) : groups[gi]));
    used.forEach((g, i) => {
        g.enableBlending = i === 0;
        g.blendingSpeed = speed;
        g.start(layers[i][2], 1, g.from, g.to);
        g.pause();
        g.weight = total >= 1 ? layers[i][3] : layers[i][3] / total;
    });
    const finals = [];
    const first = range.frames ? range.frames[0] : 0;
    for (const [k, t] of rangeTimes(range)) {
        used.forEach((g, i) => {
            const off = layers[i][1];
            g.goToFrame(gltfFrame(g, off === 0 ? t : off + t, layers[i][2]), true); // sk_sample_layer_time
        });
        scene._animate();
        if (k < first) continue;
        sk.prepare(true);
        finals.push(Array.from(sk._transformMatrices));
    }
    used.forEach((g, i) => {
        g.stop();
        g.enableBlending = false;
        g.weight = -1;
        if (g !== groups[layers[i][0]]) g.dispose();
    });
    return finals;
}

let asset = null, rel0 = null;
/** The asset of `rel`: the last case's, or loaded anew in place of it. */
async function assetFor(rel) {
    if (rel !== rel0) {
        if (asset) {
            asset.scene.dispose();
            asset.engine.dispose();
        }
        asset = await loadAsset(rel);
        rel0 = rel;
    }
    return asset;
}
/** The case's blendIn: its speed, and the clip it blends from when there is one. */
function blendInOf({ groups }, speed, from) {
    const blendIn = { speed };
    if (from) blendIn.from = { animation: groups[from[0]].name, time: from[1], loop: from[2] };
    return blendIn;
}
/** One case line: a pose of `layers` over `range`, Babylon's poses expected. */
const caseLine = (name, rel, layers, range, finals) =>
    line({ name, case: { skeleton: { gltf: rel }, ops: [{ op: "pose", layers, ...range }] },
        expected: { results: finals.map((f) => ({ final: keepSign(f) })) } });

const lines = [];
for (const c of CASES) {
    const [rel, bi, loop, speed, from, range, ratio] = c;
    const a = await assetFor(rel);
    const layer = { animation: a.groups[bi].name, time: 0, loop, blendIn: blendInOf(a, speed, from) };
    if (ratio !== undefined) layer.speedRatio = ratio;
    const name = `blendIn ${rel} ${JSON.stringify([bi, loop, speed, from, range, ratio ?? null])}`;
    lines.push(caseLine(name, rel, [layer], range, play(a, c)));
}
for (const c of LAYER_CASES) {
    const [rel, layers, speed, from, range] = c;
    const a = await assetFor(rel);
    const ls = layers.map(([gi, time, loop, weight], i) => {
        const l = { animation: a.groups[gi].name, time, loop, weight };
        if (i === 0) l.blendIn = blendInOf(a, speed, from);
        return l;
    });
    const name = `blendIn with layers ${rel} ${JSON.stringify([layers, speed, from, range])}`;
    lines.push(caseLine(name, rel, ls, range, playLayers(a, c)));
}
process.stdout.write(lines.join("\n") + "\n");
