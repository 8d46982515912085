#!/usr/bin/env node
// Babylon.js oracle for root motion per frame (issue 34): loads a .glb
// (NullEngine, from bytes) and, for each case, plays the in-place group of
// Babylon 9.34's RootMotionClip under a RootMotionController, one scene
// animation step per frame, and prints per frame what skinnerd answers to
// {"animation", "frames": [0, N], "fps", "loop", "rootMotion": options}:
//  * finalSha256: SHA-256 of the skeleton's _transformMatrices after the
//    step (float32 bytes, -0 written as +0), the in-place pose as played;
//  * offset/turn: clip._motionBetween(from, to, 0, progress) at the clock's
//    evaluated progress (the motion since the clip's start);
//  * deltaOffset/deltaTurn: what the controller moved the character by in
//    that step (_frameDelta in character space, _frameYaw).
// Each step's time is the millisecond count whose progress, as
// RuntimeAnimation.animate computes it ((ms * 60) / 1000), is exactly
// k / fps * 60, skinnerd's progress for frame k; the oracle checks that the
// clock's evaluated progress is that number ("progress"). Where no such
// time exists ("inexact" counts them) the step is taken at time 0 with the
// runtimes' frame offset at the progress (what goToFrame leaves there).
//
//   node babylon_rootframes.mjs FILE CASES_JSON > expected.json
//
// CASES_JSON: [{"clip", "options", "fps", "frames": N, "loop"}], options
// under skinnerd's JSON names (source "root"/"footContact", bone names).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";

console.log = (...args) => console.error(...args);
const B = await import("@babylonjs/core");
await import("@babylonjs/loaders/glTF/index.js");
const { NullEngine, Scene, LoadAssetContainerAsync, Logger, RootMotionClip, RootMotionController, Vector3 } = B;
Logger.LogLevels = Logger.ErrorLogLevel;

const [file, casesText] = process.argv.slice(2);
const cases = JSON.parse(casesText);
const engine = new NullEngine();
const scene = new Scene(engine);
const container = await LoadAssetContainerAsync(new Uint8Array(readFileSync(file)), scene, {
    pluginExtension: ".glb",
    pluginOptions: { gltf: { animationStartMode: 0, skipMaterials: true } },
});
container.addAllToScene();
const sk = scene.skeletons[0];
const saved = scene.transformNodes.map((n) => ({
    n, p: n.position.clone(), q: n.rotationQuaternion?.clone() ?? null, s: n.scaling.clone(),
}));
const restore = () => {
    for (const { n, p, q, s } of saved) {
        n.position = p.clone();
        n.rotationQuaternion = q ? q.clone() : null;
        n.scaling = s.clone();
    }
};
const byName = (name) => scene.transformNodes.find((t) => t.name === name) ?? null;

const f64 = new Float64Array(1), i64 = new BigInt64Array(f64.buffer);
const step = (x, d) => { f64[0] = x; i64[0] += BigInt(d); return f64[0]; };
// The time (ms) whose progress is exactly p, or null.
function msFor(p) {
    let m = (p * 1000) / 60;
    for (let i = 0; i < 64 && (m * 60) / 1000 < p; i++) m = step(m, m >= 0 ? 1 : -1);
    for (let i = 0; i < 64 && (m * 60) / 1000 > p; i++) m = step(m, m >= 0 ? -1 : 1);
    return (m * 60) / 1000 === p ? m : null;
}
const v3 = (v) => [v.x, v.y, v.z];
const hash = (m) => {
    const f = Float32Array.from(m, (x) => (x === 0 ? 0 : x));
    return createHash("sha256").update(Buffer.from(f.buffer)).digest("hex");
};

const out = { asset: basename(file), generator: "tests/oracle/babylon_rootframes.mjs", babylon: B.Engine.Version, cases: [] };
for (const c of cases) {
    restore();
    scene._animationTime = 0;
    const group = scene.animationGroups.find((g) => g.name === c.clip);
    const o = { ...c.options };
    if (o.source) o.source = o.source === "root" ? 1 : 2;
    if (o.rootNode) o.rootNode = byName(o.rootNode);
    if (o.contactNodes) o.contactNodes = o.contactNodes.map(byName);
    const clip = new RootMotionClip(group, o);
    const ctrl = new RootMotionController(clip.characterNode, [clip]);
    ctrl.applyToCharacter = false;
    const ig = clip.animationGroup;
    ig.start(!!c.loop, 1, ig.from, ig.to);
    const frames = [];
    let inexact = 0, last = null;
    for (let k = 0; k < c.frames; k++) {
        const p = (k / c.fps) * 60;
        const ms = msFor(p);
        const runtimes = ig.animatables.flatMap((a) => a.getAnimations());
        if (ms === null) {
            // No time gives p: the step is taken at time 0 with the runtimes'
            // frame offset at p, which RuntimeAnimation.animate adds as it does
            // after a goToFrame.
            inexact++;
            for (const r of runtimes) r._absoluteFrameOffset = p;
        }
        scene._animationTime = ms ?? 0;
        scene._animate(0);
        for (const r of runtimes) r._absoluteFrameOffset = 0;
        scene.onAfterAnimationsObservable.notifyObservers(scene);
        sk.prepare(true);
        // A playback that does not loop leaves the scene at its end, and its
        // clock holds the progress of its last evaluation.
        const runtime = (last = clip._clockRuntime ?? last);
        const progress = runtime._evaluatedProgress;
        if (progress !== (c.loop ? p : Math.min(Math.max(p, 0), runtime._evaluatedTo - runtime._evaluatedFrom)))
            throw new Error(`frame ${k}: the clock's progress ${progress} is not ${p}`);
        const offset = new Vector3();
        const turn = clip._motionBetween(runtime._evaluatedFrom, runtime._evaluatedTo, 0, progress, offset);
        frames.push({
            progress, finalSha256: hash(sk._transformMatrices), offset: v3(offset), turn,
            deltaOffset: v3(ctrl._frameDelta), deltaTurn: ctrl._frameYaw,
        });
    }
    ig.stop();
    ctrl.dispose();
    out.cases.push({
        ...c, source: ["none", "root", "footContact"][clip.source], extractsRotation: clip.extractsRotation,
        rewritesRoot: ig.targetedAnimations.some((t, i) => t.animation !== group.targetedAnimations[i]?.animation),
        inexact, results: frames,
    });
    clip.dispose();
}
process.stdout.write(JSON.stringify(out) + "\n");
