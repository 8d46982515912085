#!/usr/bin/env node
// Writes a glTF file's skeleton in Babylon's own format: Skeleton.serialize()
// of the loaded skin (NullEngine), the links to transform nodes removed, so
// that Skeleton.Parse gives bones without linked transform nodes (what a
// Babylon-format upload is). Numbers exactly as JSON.stringify prints them.
//
//   node babylon_skeleton_of.mjs FILE.glb [SKIN] > skeleton.json

import { readFileSync } from "node:fs";

console.log = (...args) => console.error(...args);
const B = await import("@babylonjs/core");
await import("@babylonjs/loaders/glTF/index.js");
const { NullEngine, Scene, LoadAssetContainerAsync, Logger } = B;
Logger.LogLevels = Logger.ErrorLogLevel;
const [file, skin] = process.argv.slice(2);
const scene = new Scene(new NullEngine());
const c = await LoadAssetContainerAsync(new Uint8Array(readFileSync(file)), scene, {
    pluginExtension: ".glb",
    pluginOptions: { gltf: { animationStartMode: 0, skipMaterials: true } },
});
const s = c.skeletons[Number(skin ?? 0)].serialize();
for (const b of s.bones) delete b.linkedTransformNodeId;
process.stdout.write(JSON.stringify(s) + "\n");
