#!/usr/bin/env node
// Babylon.js oracle for layers that tools use, on glTF clips: additive
// layers (AnimationGroup.MakeAnimationAdditive with a reference frame, the
// group played with isAdditive) and bone masks (AnimationGroupMask include
// / exclude, a bone and its subtree), mixed with plain weighted layers by
// Babylon's late animation bindings. Writes `skinner eval` cases with
// Babylon's answers (tests/conformance/layers.jsonl):
//
//   cd tests/oracle && node babylon_layers.mjs > ../conformance/layers.jsonl
//
// Each spec: groups started and paused with their weights, goToFrame(t * 60,
// true), scene._animate() (paused animatables: only the late bindings run),
// skeleton.prepare(true); the additive groups are clones made additive, so
// every spec starts from the loaded keys. A mask is applied as Babylon's
// playback applies it (only the retained targets' animatables write values;
// AnimationGroup.goToFrame itself ignores masks). Every float is written
// exactly (-0 as -0.0) and compared bit for bit by tests/check_sk_banim.

import { B, FPS, keepSign, line, loadAsset, maskNames } from "./babylon_common.mjs";

const { AnimationGroup, AnimationGroupMask } = B;

// [asset under tests/, mask bone, specs]. A layer: [group, time, weight,
// {additive?: reference seconds, mask?: skinnerd mask}].
const ASSETS = [
    ["data/Fox.glb", "b_Spine01_02", "b_Neck_04"],
    ["data/gltf/cubic_step.gltf", null, null],
];

// MakeAnimationAdditive changes the group's Animation keys in place (its
// clone options clone the group but share the animations, or clone the
// animation but transform throwaway key copies), so every spec loads the
// asset afresh and uses a group either weighted or additive, never both.
function specs(maskBone, otherBone, ngroups) {
    const out = [
        [[0, 0.3, 1], [1, 0.5, 1, { additive: 0 }]],
        [[1, 0.6, 0.8, { additive: 0.1 }]],
        [[0, 0.45, 1], [1, 0.15, 0.7, { additive: 0.3 }]],
    ];
    if (ngroups >= 3) {
        out.push([[0, 0.2, 0.6], [2, 0.7, 0.4], [1, 0.4, 0.5, { additive: 0.25 }]]);
        out.push([[0, 0.45, 1], [1, 0.15, 0.7, { additive: 0.3 }], [2, 0.9, 0.5, { additive: 0 }]]);
    }
    if (maskBone) {
        out.push([[0, 0.3, 0.5], [1, 0.6, 0.5, { mask: { bone: maskBone, subtree: true } }]]);
        out.push([[0, 0.3, 0.5, { mask: { exclude: [maskBone], subtree: true } }], [1, 0.6, 0.5]]);
        out.push([[0, 0.4, 1], [1, 0.2, 1, { additive: 0, mask: { bone: otherBone, subtree: true } }]]);
        out.push([[0, 0.4, 1], [1, 0.2, 0.6, { additive: 0.5, mask: { include: [maskBone, otherBone] } }]]);
    }
    return out;
}

async function run(rel, maskBone, otherBone) {
    const probe = await loadAsset(rel);
    const all = specs(maskBone, otherBone, probe.groups.length);
    probe.scene.dispose();
    probe.engine.dispose();
    const lines = [];
    for (let si = 0; si < all.length; si++) {
        const spec = all[si];
        const { engine, scene, sk, groups, restore } = await loadAsset(rel);
        restore();
        const used = spec.map(([gi, t, w, x = {}]) => {
            const g = groups[gi];
            if (x.additive !== undefined) AnimationGroup.MakeAnimationAdditive(g, { referenceFrame: x.additive * FPS });
            if (x.mask) g.mask = new AnimationGroupMask(maskNames(sk, x.mask), x.mask.exclude ? 1 : 0);
            return [g, t, w];
        });
        for (const [g, , w] of used) {
            g.start(false, 1, g.from, g.to, g.isAdditive);
            g.pause();
            g.weight = w;
        }
        // A mask acts while the group plays: syncWithMask pauses the masked
        // targets' animatables, so they write nothing. AnimationGroup.goToFrame
        // ignores the mask; sample what playback does instead.
        for (const [g, t] of used) for (const a of g.animatables) if (g._isTargetRetainedByMask(a.target)) a.goToFrame(t * FPS, true);
        scene._animate();
        sk.prepare(true);
        const final = keepSign(Array.from(sk._transformMatrices));
        const layers = spec.map(([gi, t, w, x = {}]) => {
            const l = { animation: groups[gi].name, time: t, weight: w };
            if (x.additive !== undefined) {
                l.additive = true;
                l.reference = x.additive;
            }
            if (x.mask) l.mask = x.mask;
            return l;
        });
        const desc = spec.map(([, , , x = {}]) => (x.additive !== undefined ? "additive" : "weighted") + (x.mask ? "+mask" : "")).join(", ");
        lines.push(line({
            name: `layers ${rel} ${si}: ${desc}`,
            case: { skeleton: { gltf: rel }, ops: [{ op: "pose", layers }] },
            expected: { results: [{ final }] },
        }));
        scene.dispose();
        engine.dispose();
    }
    return lines;
}

const all = [];
for (const [rel, m, o] of ASSETS) all.push(...(await run(rel, m, o)));
process.stdout.write(all.join("\n") + "\n");
