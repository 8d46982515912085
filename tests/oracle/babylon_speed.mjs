#!/usr/bin/env node
// Babylon.js oracle for a layer's "speedRatio", bit for bit: glTF clips
// started as AnimationGroup.start(loop, speedRatio, from, to), each
// animatable's clock at (layer time) * 1000 ms, the frame then as
// RuntimeAnimation.animate computes it (elapsed * (fps * speedRatio) /
// 1000, wrapped into the range with loop, its end without), weighted
// groups through the scene's late animation bindings. Writes `skinner
// eval` cases (tests/conformance/layers_speed.jsonl, held bit for bit by
// tests/check_layers_speed.c):
//
//   cd tests/oracle && node babylon_speed.mjs > ../conformance/layers_speed.jsonl
//
// Each animatable is given _localDelayOffset = -ms and the scene's clock
// is 0 when scene._animate(0) runs: 0 - (-ms) is ms exactly, so each layer
// runs at its own time in one step. Weights under 1 are normalised first,
// as skinnerd does (babylon_layers_weighted.mjs).

import { loadAsset, keepSign, line } from "./babylon_common.mjs";

// a layer: [group, time offset, weight, speedRatio, loop]
const ASSETS = [
    ["data/Fox.glb", [
        [[2, 0, 1, 1.5, true]],
        [[1, 0.3, 1, 0.37, true]],
        [[2, 0, 1, 2.25, false]],
        [[0, 0.2, 0.6, 1.7, true], [1, 0, 0.4, 0.8, true]],
        [[1, 0, 0.5, 1.3, true], [2, 0.1, 0.5, 3.1, true], [0, 0, 0.25, 1, false]],
        [[2, 0, 1, 1, true], [1, 0.5, 1, 0.5, true]],
    ]],
    ["data/CesiumMan.glb", [
        [[0, 0, 1, 1.9, true]],
        [[0, 0.1, 1, 0.61, false]],
    ]],
    ["data/RobotExpressive.glb", [
        [[0, 0.4, 0.2, 1.25, true], [1, 0.25, 0.5, 0.7, true], [2, 0.6, 0.3, 2.5, true]],
        [[6, 0, 1, 1.75, true]],
    ]],
];
const TIMES = [0, 0.1, 0.37, 0.9, 1.234, 2.5, 3.7, 7.77];

/** One frame: layer i at (its offset + t) seconds, or its offset alone when t is null. */
function pose({ scene, sk, groups, restore }, spec, t) {
    restore();
    const total = spec.reduce((s, [, , w]) => s + w, 0);
    const one = spec.length === 1;
    const used = spec.map(([gi, o, w, r, loop]) => {
        const g = groups[gi];
        g.start(loop, r, g.from, g.to);
        g.weight = one ? -1 : total >= 1 ? w : w / total;
        const lt = t === null ? o : o === 0 ? t : o + t;
        for (const a of g.animatables) {
            a._localDelayOffset = -(lt * 1000);
            a._pausedDelay = null;
            a._manualJumpDelay = null;
        }
        return g;
    });
    scene._animationTime = 0;
    scene._animate(0);
    sk.prepare(true);
    const final = Array.from(sk._transformMatrices);
    for (const g of used) {
        g.stop();
        g.weight = -1;
    }
    return final;
}

const lines = [];
for (const [rel, specs] of ASSETS) {
    const asset = await loadAsset(rel);
    specs.forEach((spec, si) => {
        const layers = spec.map(([gi, time, weight, speedRatio, loop]) => ({ animation: asset.groups[gi].name, time, weight, speedRatio, loop }));
        const name = `speedRatio ${rel} ${si}: ${JSON.stringify(spec)}`;
        const skeleton = { gltf: rel };
        lines.push(line({ name, case: { skeleton, ops: [{ op: "pose", layers }] }, expected: { results: [{ final: keepSign(pose(asset, spec, null)) }] } }));
        lines.push(line({
            name: `${name} "times"`,
            case: { skeleton, ops: [{ op: "pose", layers, times: TIMES }] },
            expected: { results: TIMES.map((t) => ({ final: keepSign(pose(asset, spec, t)) })) },
        }));
        const frames = [3, 70], fps = 24;
        const ft = [];
        for (let k = frames[0]; k < frames[1]; k++) ft.push(k / fps);
        lines.push(line({
            name: `${name} "frames"`,
            case: { skeleton, ops: [{ op: "pose", layers, fps, frames }] },
            expected: { results: ft.map((t) => ({ final: keepSign(pose(asset, spec, t)) })) },
        }));
    });
    asset.scene.dispose();
    asset.engine.dispose();
}
process.stdout.write(lines.join("\n") + "\n");
