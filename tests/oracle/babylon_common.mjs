// What the Babylon.js oracles share: Babylon loaded quietly (its
// console.log goes to stderr, so stdout holds only the cases), a glTF asset
// loaded into a scene of its own with its nodes' loaded TRS kept to restore
// between poses, the bone names a skinnerd mask names, the case lines with
// -0 kept, and the events oracles' seeded draws and stepped clock.

console.log = (...args) => console.error(...args);
export const B = await import("@babylonjs/core");
await import("@babylonjs/loaders/glTF/index.js");
B.Logger.LogLevels = B.Logger.ErrorLogLevel;

import { readFileSync } from "node:fs";

/** Babylon's glTF frame rate: a layer's time t plays frame t * FPS. */
export const FPS = 60;

/**
 * Loads glTF `bytes` (`ext` ".glb" or ".gltf") into a new scene of `engine`
 * (a new NullEngine without one), animation groups not started, materials
 * skipped. GLB loads from the bytes; a text .gltf from a data: URL (the JSON
 * plugin reads binary only for GLB). Returns {engine, scene}.
 */
export async function loadBytes(bytes, ext, engine = new B.NullEngine()) {
    const scene = new B.Scene(engine);
    const source = ext === ".glb" ? bytes : `data:model/gltf+json;base64,${Buffer.from(bytes).toString("base64")}`;
    const container = await B.LoadAssetContainerAsync(source, scene, {
        pluginExtension: ext,
        pluginOptions: { gltf: { animationStartMode: 0 /* NONE */, skipMaterials: true } },
    });
    container.addAllToScene();
    return { engine, scene };
}

/** Every node's position, rotation and scaling as they are now; returns the function that puts them back. */
export function saveNodes(scene) {
    const nodes = scene.transformNodes.concat(scene.meshes);
    const saved = nodes.map((n) => ({ n, p: n.position.clone(), q: n.rotationQuaternion ? n.rotationQuaternion.clone() : null, s: n.scaling.clone() }));
    return () => {
        for (const { n, p, q, s } of saved) {
            n.position = p.clone();
            n.rotationQuaternion = q ? q.clone() : null;
            n.scaling = s.clone();
        }
    };
}

/**
 * Loads `rel` (under tests/, .glb or .gltf) as loadBytes does. Returns
 * {engine, scene, sk (skeleton0, else the first), groups, restore (puts
 * every node's loaded position, rotation and scaling back)}.
 */
export async function loadAsset(rel) {
    const bytes = new Uint8Array(readFileSync(new URL(rel, new URL("..", import.meta.url))));
    const { engine, scene } = await loadBytes(bytes, rel.endsWith(".glb") ? ".glb" : ".gltf");
    const restore = saveNodes(scene);
    const sk = scene.skeletons.find((s) => s.id === "skeleton0") ?? scene.skeletons[0];
    return { engine, scene, sk, groups: scene.animationGroups.slice(), restore };
}

/** A node's TransformNode chain (position, rotationQuaternion or rotation, scaling, parent) as a case's "mesh", in exact doubles; null for none. */
export function meshChain(node) {
    if (!node) return null;
    const m = { position: [node.position.x, node.position.y, node.position.z] };
    if (node.rotationQuaternion) {
        const q = node.rotationQuaternion;
        m.rotationQuaternion = [q.x, q.y, q.z, q.w];
    } else m.rotation = [node.rotation.x, node.rotation.y, node.rotation.z];
    m.scaling = [node.scaling.x, node.scaling.y, node.scaling.z];
    if (node.parent) m.parent = meshChain(node.parent);
    return m;
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

/** The events oracles' draws for `seed` (a 32-bit LCG): r() in [0, 1), pick(array), int(lo, hi) inclusive. */
export function seeded(seed) {
    let s = seed >>> 0;
    const r = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296;
    return { r, pick: (a) => a[Math.floor(r() * a.length)], int: (lo, hi) => lo + Math.floor(r() * (hi - lo + 1)) };
}

/**
 * Draws a pose's steps into `pose`: "times" (3 to 40, any order: each a step
 * of up to `dt` s on, or 15% of the time a jump back), or "frames" [s, e] at
 * an fps from `rates`, e up to `maxEnd` (Babylon plays 0 .. e - 1, the chunk
 * answers s ..). Returns {steps (the times in s Babylon plays), skip (the
 * steps before the answer's first)}.
 */
export function drawSteps({ r, pick, int }, pose, dt, rates, maxEnd) {
    let steps, skip = 0;
    if (r() < 0.5) {
        const n = int(3, 40);
        steps = [];
        let t = 0;
        for (let i = 0; i < n; i++) {
            t = r() < 0.15 ? r() * t : t + r() * dt;
            steps.push(Math.round(t * 1000) / 1000);
        }
        pose.times = steps;
    } else {
        const F = pick(rates);
        const e = int(5, maxEnd), st = r() < 0.5 ? 0 : int(0, e - 1);
        pose.fps = F;
        pose.frames = [st, e];
        steps = [];
        for (let k = 0; k < e; k++) steps.push(k / F);
        skip = st;
    }
    return { steps, skip };
}

/**
 * Steps the animatables `ats` of `scene` through `steps` by scene._animate,
 * each animatable's clock at exactly (step time) * 1000 ms (the scene's clock
 * 0), so each step is RuntimeAnimation.animate at the time skinnerd's pose
 * has. `fired` is the list the events' actions push to; returns what each
 * step from `skip` on fired.
 */
export function fireSteps(scene, ats, steps, skip, fired) {
    const expected = [];
    steps.forEach((t, i) => {
        fired.length = 0;
        for (const at of ats) {
            at._localDelayOffset = -(t * 1000);
            at._pausedDelay = null;
            at._manualJumpDelay = null;
        }
        scene._animationTime = 0;
        scene._animate(0);
        if (i >= skip) expected.push(fired.slice());
    });
    return expected;
}
