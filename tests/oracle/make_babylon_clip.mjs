#!/usr/bin/env node
// Writes a glTF clip as a skeleton in Babylon's own format with bone
// animations: the benchmark asset of Babylon-format clip ranges
// (tests/data/fox-walk-babylon.json, `skinner bench --clips`,
// tests/oracle/bench_clips.mjs). Babylon loads the file (NullEngine, from
// the bytes), then the skin's skeleton is written with
// JSON.stringify(skeleton.serialize()), and every animation the clip's
// AnimationGroup plays on a bone's node (position, rotationQuaternion,
// scaling; keys, 60 frames a second as the loader makes them) is written
// on that bone with Animation.serialize(), all of a bone's in its
// "animations" list (skinnerd's extension: Babylon's Skeleton.Parse reads
// one "animation" per bone, so bench_clips.mjs parses the list itself),
// and the clip becomes the range of its name.
//
//   node make_babylon_clip.mjs ../data/Fox.glb Walk > ../data/fox-walk-babylon.json
//
// npm install in tests/oracle first. Deterministic: the same file and clip
// give the same bytes.

import { readFileSync } from "node:fs";

console.log = (...args) => console.error(...args);

const B = await import("@babylonjs/core");
await import("@babylonjs/loaders/glTF/index.js");
const { NullEngine, Scene, LoadAssetContainerAsync, Logger, Animation } = B;
Logger.LogLevels = Logger.ErrorLogLevel;

const [file, clip] = process.argv.slice(2);
if (!file || clip === undefined) {
    console.error("usage: make_babylon_clip.mjs FILE.glb CLIP");
    process.exit(2);
}
const engine = new NullEngine();
const scene = new Scene(engine);
const container = await LoadAssetContainerAsync(new Uint8Array(readFileSync(file)), scene, {
    pluginExtension: ".glb",
    pluginOptions: { gltf: { animationStartMode: 0 /* NONE */, skipMaterials: true } },
});
container.addAllToScene();
const sk = scene.skeletons[0];
const g = scene.animationGroups.find((x) => x.name === clip) ?? scene.animationGroups[Number(clip)];
if (!sk || !g) {
    console.error(`make_babylon_clip.mjs: ${file}: no skeleton or no clip ${clip}`);
    process.exit(2);
}
sk.prepare(true); // the bones' matrices from their nodes' loaded TRS
const out = sk.serialize();
out.ranges = [{ name: g.name, from: g.from, to: g.to }];
const order = ["position", "rotationQuaternion", "scaling"];
for (const [i, bone] of sk.bones.entries()) {
    const node = bone.getTransformNode();
    const anims = g.targetedAnimations
        .filter((ta) => ta.target === node && order.includes(ta.animation.targetProperty))
        .map((ta) => ta.animation)
        .sort((a, b) => order.indexOf(a.targetProperty) - order.indexOf(b.targetProperty));
    const spec = out.bones[i];
    delete spec.animation;
    delete spec.linkedTransformNodeId; // a node of the loaded scene only
    delete spec.linkedTransformNodeUniqueId;
    if (anims.length > 0) {
        spec.animations = anims.map((a) => {
            const copy = new Animation(a.name, a.targetProperty, a.framePerSecond, a.dataType, Animation.ANIMATIONLOOPMODE_CYCLE);
            copy.setKeys(a.getKeys().map((k) => ({ frame: k.frame, value: k.value.clone() })));
            return copy.serialize();
        });
    }
}
process.stdout.write(JSON.stringify(out) + "\n");
scene.dispose();
engine.dispose();
