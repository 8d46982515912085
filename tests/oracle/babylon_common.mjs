// What the Babylon.js glTF oracles (babylon_speed.mjs, babylon_blendin.mjs,
// babylon_layers.mjs, babylon_layers_weighted.mjs) share: Babylon loaded
// quietly (its console.log goes to stderr, so stdout holds only the cases),
// a test asset loaded into a scene of its own with its nodes' loaded TRS
// kept to restore between poses, the bone names a skinnerd mask names, and
// the case lines with -0 kept.

console.log = (...args) => console.error(...args);
export const B = await import("@babylonjs/core");
await import("@babylonjs/loaders/glTF/index.js");
B.Logger.LogLevels = B.Logger.ErrorLogLevel;

import { readFileSync } from "node:fs";

/** Babylon's glTF frame rate: a layer's time t plays frame t * FPS. */
export const FPS = 60;

/**
 * Loads `rel` (under tests/, .glb or .gltf) into a new NullEngine scene,
 * animation groups not started, materials skipped. Returns {engine, scene,
 * sk (skeleton0, else the first), groups, restore (puts every node's
 * loaded position, rotation and scaling back)}.
 */
export async function loadAsset(rel) {
    const bytes = new Uint8Array(readFileSync(new URL(rel, new URL("..", import.meta.url))));
    const ext = rel.endsWith(".glb") ? ".glb" : ".gltf";
    const engine = new B.NullEngine();
    const scene = new B.Scene(engine);
    const source = ext === ".glb" ? bytes : `data:model/gltf+json;base64,${Buffer.from(bytes).toString("base64")}`;
    const container = await B.LoadAssetContainerAsync(source, scene, {
        pluginExtension: ext,
        pluginOptions: { gltf: { animationStartMode: 0, skipMaterials: true } },
    });
    container.addAllToScene();
    const nodes = scene.transformNodes.concat(scene.meshes);
    const saved = nodes.map((n) => ({ n, p: n.position.clone(), q: n.rotationQuaternion ? n.rotationQuaternion.clone() : null, s: n.scaling.clone() }));
    const restore = () => {
        for (const { n, p, q, s } of saved) {
            n.position = p.clone();
            n.rotationQuaternion = q ? q.clone() : null;
            n.scaling = s.clone();
        }
    };
    const sk = scene.skeletons.find((s) => s.id === "skeleton0") ?? scene.skeletons[0];
    return { engine, scene, sk, groups: scene.animationGroups.slice(), restore };
}

/** The bone names a skinnerd mask ({bone | include | exclude, subtree?}) names in `sk`. */
export function maskNames(sk, mask) {
    const names = new Set(mask.include ?? mask.exclude ?? [mask.bone]);
    if (mask.subtree) {
        const walk = (b) => {
            names.add(b.name);
            for (const c of b.getChildren()) walk(c);
        };
        for (const b of sk.bones) if (names.has(b.name)) walk(b);
    }
    return [...names];
}

// JSON.stringify writes -0 as 0; the cases keep its sign ("-0.0").
const SIGNED = "\u0000-0\u0000";
/** A "final" array with each -0 marked for `line`. */
export const keepSign = (final) => final.map((x) => (Object.is(x, -0) ? SIGNED : x));
/** One case line: JSON with keepSign's marks written as -0.0. */
export const line = (o) => JSON.stringify(o).replaceAll(JSON.stringify(SIGNED), "-0.0");
