#!/usr/bin/env node
// Babylon.js oracle for the nodes its glTF loader puts below `__root__`
// (what AnimatorAvatar's checkHierarchy searches): for each .glb given, a
// line "FILE<TAB>COUNT", then one line per descendant, "NAME<TAB>PARENT"
// (PARENT "__root__" for the root's children), sorted by code unit.
//
//   node babylon_scene_nodes.mjs A.glb B.glb ... > scene-nodes.txt

import { readFileSync } from "node:fs";
import { basename } from "node:path";

console.log = (...args) => console.error(...args);
const B = await import("@babylonjs/core");
await import("@babylonjs/loaders/glTF/index.js");
const { NullEngine, Scene, LoadAssetContainerAsync, Logger } = B;
Logger.LogLevels = Logger.ErrorLogLevel;
const scene = new Scene(new NullEngine());
for (const file of process.argv.slice(2)) {
    const c = await LoadAssetContainerAsync(new Uint8Array(readFileSync(file)), scene, {
        pluginExtension: ".glb",
        pluginOptions: { gltf: { animationStartMode: 0, skipMaterials: true } },
    });
    c.addAllToScene();
    const root = c.rootNodes[0];
    const nodes = root.getDescendants(false);
    const lines = nodes.map((n) => n.name + "\t" + (n.parent === root ? "__root__" : n.parent.name));
    lines.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    process.stdout.write(basename(file) + "\t" + nodes.length + "\n" + lines.map((l) => l + "\n").join(""));
}
