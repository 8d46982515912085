#!/usr/bin/env node
// Babylon.js oracle for retargeting between different skeletons: loads a
// source and a target .glb (NullEngine, one scene, animations not started),
// makes an AnimatorAvatar of the target's __root__ and runs Babylon 9.34's
// retargetAnimationGroup on the source clip with the options given. Prints
// the retargeted keys (per targeted animation: target node, property,
// frames, values) and the TRS of every driven target node after goToFrame
// at frames across the clip.
//
//   node babylon_retarget.mjs SOURCE.glb TARGET.glb CLIP [OPTIONS_JSON] > expected.json
//
// OPTIONS_JSON uses Babylon's option names; mapNodeNames is an object
// (source name -> target name), made a Map here. Numbers are printed exactly
// (JS doubles, shortest round trip).

import { readFileSync } from "node:fs";
import { basename } from "node:path";

console.log = (...args) => console.error(...args);
const B = await import("@babylonjs/core");
await import("@babylonjs/loaders/glTF/index.js");
const { NullEngine, Scene, LoadAssetContainerAsync, Logger, AnimatorAvatar } = B;
Logger.LogLevels = Logger.ErrorLogLevel;

const [srcFile, dstFile, clipName, optText] = process.argv.slice(2);
const opts = optText ? JSON.parse(optText) : {};
const engine = new NullEngine();
const scene = new Scene(engine);
const load = async (file) => {
    const c = await LoadAssetContainerAsync(new Uint8Array(readFileSync(file)), scene, {
        pluginExtension: ".glb",
        pluginOptions: { gltf: { animationStartMode: 0, skipMaterials: true } },
    });
    c.addAllToScene();
    return c;
};
const src = await load(srcFile);
// A .json target is a skeleton in Babylon's format (Skeleton.Parse): bones
// without linked transform nodes, which the avatar finds by name.
const babylonTarget = dstFile.endsWith(".json");
const dst = babylonTarget
    ? { skeletons: [B.Skeleton.Parse(JSON.parse(readFileSync(dstFile, "utf8")), scene)] }
    : await load(dstFile);
const group = src.animationGroups.find((g) => g.name === clipName) ?? src.animationGroups[Number(clipName)];
const avatar = new AnimatorAvatar("target", babylonTarget ? undefined : dst.rootNodes[0], false, false);
if (babylonTarget) avatar.skeletons.add(dst.skeletons[0]);
avatar.showWarnings = false;
const o = { ...opts };
if (o.mapNodeNames) o.mapNodeNames = new Map(Object.entries(o.mapNodeNames));
const out = {
    source: basename(srcFile),
    target: basename(dstFile),
    clip: group.name,
    generator: "tests/oracle/babylon_retarget.mjs",
    babylon: B.Engine.Version,
    options: opts,
    skeleton: dst.skeletons.indexOf([...avatar.skeletons][0]),
};
const retargeted = avatar.retargetAnimationGroup(group, o);
const v = (x) => (x.w !== undefined ? [x.x, x.y, x.z, x.w] : [x.x, x.y, x.z]);
out.name = retargeted.name;
out.from = retargeted.from;
out.to = retargeted.to;
out.animations = retargeted.targetedAnimations.map((ta) => ({
    target: ta.target.name,
    property: ta.animation.targetProperty,
    frames: ta.animation.getKeys().map((k) => k.frame),
    values: ta.animation.getKeys().map((k) => v(k.value)),
}));
// Played as a user plays it: goToFrame, then the nodes' TRS.
const nodes = [...new Set(retargeted.targetedAnimations.map((ta) => ta.target))];
const frames = [];
const n = 24;
for (let k = 0; k <= n; k++) frames.push(retargeted.from + ((retargeted.to - retargeted.from) * k) / n);
frames.push(retargeted.from + (retargeted.to - retargeted.from) * 0.3183098861837907);
retargeted.play(false);
out.poses = frames.map((frame) => {
    retargeted.goToFrame(frame);
    retargeted.pause();
    return {
        frame,
        nodes: nodes.map((t) => ({ name: t.name, trs: [...v(t.position), ...v(t.rotationQuaternion), ...v(t.scaling)] })),
    };
});
retargeted.stop();
process.stdout.write(JSON.stringify(out) + "\n");
