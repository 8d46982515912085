#!/usr/bin/env node
// Babylon.js oracle for weighted glTF layers, bit for bit: three or more
// clips that drive different bones and paths (Babylon's late animation
// bindings blend each bone's path over the groups that drive it, mixing in
// the rest value when their weights add up to under 1), weights whose
// double sums are exactly 1, under 1 and over 1, two layers over 1, masks.
// Writes `skinner eval` cases (tests/conformance/layers_weighted.jsonl,
// held bit for bit by tests/check_sk_banim.c):
//
//   cd tests/oracle && node babylon_layers_weighted.mjs > ../conformance/layers_weighted.jsonl
//
// skinnerd normalises weights that add up to under 1 (proto/schemas/pose.json),
// so Babylon gets w / total then; at 1 or more it gets the weights as given.
// "final" is Babylon's float32 matrices with -0 kept ("-0.0"). Each case is one pose and a "times" range (offsets added to each layer's
// time): the single-frame and the range paths of skinnerd.

import { B, FPS, loadAsset, keepSign, line, maskNames } from "./babylon_common.mjs";

const { AnimationGroupMask } = B;
const OFFSETS = [0, 0.1, 0.35];

// [asset under tests/, mask bone, specs]; a layer: [group, time, weight, mask?].
const ASSETS = [
    ["data/RobotExpressive.glb", "Head", [
        [[0, 0.4, 0.2], [1, 0.25, 0.5], [2, 0.6, 0.3]],
        [[0, 0.3, 0.7], [1, 0.2, 0.3]],
        [[2, 0.5, 0.6], [1, 0.3, 0.3], [0, 0.2, 0.1]], // 0.9999999999999999
        [[0, 0.5, 0.4], [2, 0.3, 0.4], [1, 0.2, 0.4]], // 1.2000000000000002
        [[1, 0.5, 1], [2, 0.7, 1]], // two over 1
        [[3, 0.2, 1], [0, 0.6, 0.5], [5, 0.4, 0.75], [2, 0.9, 0.25]],
        [[0, 0.35, 0.15], [1, 0.45, 0.2]], // under 1: normalised
        [[0, 0.3, 0.5], [2, 0.6, 0.5, { bone: "Head", subtree: true }]],
        [[1, 0.3, 0.4, { exclude: ["Head"], subtree: true }], [2, 0.6, 0.3], [0, 0.1, 0.3]],
        // weights over 1: Animatable.weight clamps each to [0, 1]
        [[0, 0.3, 1.5], [1, 0.2, 0.5]],
        [[0, 0.4, 7], [2, 0.6, 3]],
        [[1, 0.5, 2], [2, 0.7, 0.25], [0, 0.1, 0.5]],
        [[0, 0.3, 1.25], [2, 0.6, 0.5, { bone: "Head", subtree: true }]],
    ]],
    ["data/Fox.glb", "b_Spine01_02", [
        [[0, 0.3, 0.4], [1, 0.5, 0.35], [2, 0.7, 0.25]],
        [[2, 0.5, 0.6], [1, 0.3, 0.3], [0, 0.2, 0.1]],
        [[0, 0.2, 1], [1, 0.4, 1]],
        [[0, 0.5, 0.4], [2, 0.3, 0.4], [1, 0.2, 0.4]], // 1.2000000000000002, the same paths
        [[0, 0.3, 1.5], [1, 0.5, 0.5]], // over 1: clamped
        [[0, 0.2, 3], [1, 0.4, 2], [2, 0.6, 1]],
    ]],
];

/** One frame of the spec, each layer at its time + `off`. */
function pose({ scene, sk, groups, restore }, spec, off) {
    restore();
    const total = spec.reduce((t, [, , w]) => t + w, 0);
    const used = spec.map(([gi, t, w, mask]) => {
        const g = groups[gi];
        g.mask = mask ? new AnimationGroupMask(maskNames(sk, mask), mask.exclude ? 1 : 0) : null;
        return [g, t + off, total >= 1 ? w : w / total];
    });
    for (const [g, , w] of used) {
        g.start(false, 1, g.from, g.to);
        g.pause();
        g.weight = w;
    }
    // Only the targets a mask retains write values (as babylon_layers.mjs).
    for (const [g, t] of used) for (const a of g.animatables) if (!g.mask || g._isTargetRetainedByMask(a.target)) a.goToFrame(t * FPS, true);
    scene._animate();
    sk.prepare(true);
    const final = Array.from(sk._transformMatrices);
    for (const [g] of used) {
        g.stop();
        g.weight = -1;
        g.mask = null;
    }
    return final;
}

const lines = [];
for (const [rel, , specs] of ASSETS) {
    const asset = await loadAsset(rel);
    specs.forEach((spec, si) => {
        const layers = spec.map(([gi, time, weight, mask]) => {
            const l = { animation: asset.groups[gi].name, time, weight };
            if (mask) l.mask = mask;
            return l;
        });
        const name = `weighted layers ${rel} ${si}: ${JSON.stringify(spec.map(([gi, t, w, m]) => (m ? [gi, t, w, "mask"] : [gi, t, w])))}`;
        const skeleton = { gltf: rel };
        lines.push(line({ name, case: { skeleton, ops: [{ op: "pose", layers }] }, expected: { results: [{ final: keepSign(pose(asset, spec, 0)) }] } }));
        lines.push(line({
            name: `${name} "times"`,
            case: { skeleton, ops: [{ op: "pose", layers, times: OFFSETS }] },
            expected: { results: OFFSETS.map((o) => ({ final: keepSign(pose(asset, spec, o)) })) },
        }));
    });
    asset.scene.dispose();
    asset.engine.dispose();
}
process.stdout.write(lines.join("\n") + "\n");
