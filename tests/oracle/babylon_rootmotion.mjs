#!/usr/bin/env node
// Babylon.js oracle for root motion: loads a .glb (NullEngine, from bytes) and
// prints, for every animation group, the analysis Babylon 9.34's
// RootMotionClip makes of it (source, root and contact nodes, range, travel
// per cycle, turn, direction, height) and the motion track at a few frames
// (getOffsetAtFrame / getRotationAtFrame), with the options given.
//
//   node babylon_rootmotion.mjs FILE [OPTIONS_JSON]  > expected.json
//
// OPTIONS_JSON uses Babylon's option names (source, extractRotation,
// samplesPerSecond, minimumTravel, minimumTurn, directionSnapAngle,
// extractLateralMotion); rootNode / contactNodes are node names.
// Numbers are printed exactly (JS doubles, shortest round trip); the track is
// a Float32Array in Babylon, so its values are float32.

import { readFileSync } from "node:fs";
import { basename } from "node:path";

console.log = (...args) => console.error(...args);
const B = await import("@babylonjs/core");
await import("@babylonjs/loaders/glTF/index.js");
const { NullEngine, Scene, LoadAssetContainerAsync, Logger, RootMotionClip, Vector3 } = B;
Logger.LogLevels = Logger.ErrorLogLevel;

const [file, optText] = process.argv.slice(2);
const opts = optText ? JSON.parse(optText) : {};
const bytes = new Uint8Array(readFileSync(file));
const engine = new NullEngine();
const scene = new Scene(engine);
const container = await LoadAssetContainerAsync(bytes, scene, {
    pluginExtension: ".glb",
    pluginOptions: { gltf: { animationStartMode: 0, skipMaterials: true } },
});
container.addAllToScene();
const byName = (n) => scene.transformNodes.find((t) => t.name === n) ?? null;
const v3 = (v) => [v.x, v.y, v.z];
// The nodes between the skeleton root and __root__ (character space), nearest
// first: what skinnerd composes above its bones.
const above = [];
const rootBone = scene.skeletons[0].bones.find((b) => !b.getParent());
for (let n = rootBone.getTransformNode().parent; n && n.parent; n = n.parent) {
    const q = n.rotationQuaternion ?? B.Quaternion.FromEulerVector(n.rotation);
    above.push({ name: n.name, trs: [...v3(n.position), q.x, q.y, q.z, q.w, ...v3(n.scaling)] });
}
const out = { asset: basename(file), generator: "tests/oracle/babylon_rootmotion.mjs", babylon: B.Engine.Version, options: opts, above, clips: [] };
for (const group of scene.animationGroups) {
    const o = { ...opts };
    if (o.rootNode) o.rootNode = byName(o.rootNode);
    if (o.contactNodes) o.contactNodes = o.contactNodes.map(byName);
    let clip;
    try {
        clip = new RootMotionClip(group, o);
    } catch (e) {
        out.clips.push({ name: group.name, error: String(e.message) });
        continue;
    }
    const frames = [];
    const n = 8;
    for (let k = 0; k <= n; k++) {
        const f = clip.fromFrame + ((clip.toFrame - clip.fromFrame) * k) / n;
        frames.push({ frame: f, offset: v3(clip.getOffsetAtFrame(f, new Vector3())), turn: clip.getRotationAtFrame(f) });
    }
    // _motionBetween over the whole range and a sub-range, across loops
    // (progress unwrapped), forwards and back: what the controller applies.
    const between = [];
    const span = clip.toFrame - clip.fromFrame;
    for (const [a, b, p0, p1] of [[0, 1, 0, 0.3], [0, 1, 0.2, 2.7], [0, 1, 3.1, 0.4], [0.25, 0.75, 0.1, 5.35]]) {
        const from = clip.fromFrame + span * a, to = clip.fromFrame + span * b, r = to - from;
        const result = new Vector3();
        const turn = clip._motionBetween(from, to, p0 * r, p1 * r, result);
        between.push({ from, to, last: p0 * r, progress: p1 * r, offset: v3(result), turn });
    }
    out.clips.push({
        between,
        name: group.name,
        source: ["none", "root", "footContact"][clip.source],
        rootNode: clip.rootNode?.name ?? null,
        characterNode: clip.characterNode.name,
        contactNodes: clip.contactNodes.map((c) => c.name),
        fromFrame: clip.fromFrame,
        toFrame: clip.toFrame,
        duration: clip.duration,
        characterHeight: clip.characterHeight,
        extractsRotation: clip.extractsRotation,
        travelDirection: v3(clip.travelDirection),
        cycleOffset: v3(clip.cycleOffset),
        cycleDistance: clip.cycleDistance,
        cycleRotation: clip.cycleRotation,
        averageSpeed: clip.averageSpeed,
        samples: clip._sampleCount,
        track: Array.from(clip._track),
        frames,
    });
    clip.dispose();
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
