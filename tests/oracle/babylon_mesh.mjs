#!/usr/bin/env node
// Babylon.js oracle for skinned meshes (issue 33): loads a .glb/.gltf with
// @babylonjs/loaders (NullEngine, left-handed scene, animation groups stopped,
// as babylon_gltf.mjs), poses one skin at clip times and prints, per time, the
// CPU-skinned vertices of every primitive that skin deforms.
//
//   node babylon_mesh.mjs FILE [--skin N] [--animation NAME|INDEX] [--times T,T,...]
//                              [--no-normals]
//   node babylon_mesh.mjs --requests FILE.json   one load, many poses (below)
//
// One JSON line per time:
//   {"time": t, "animation": name|null, "morphWeights": [{"mesh": "/meshes/M", "weights": [...]}],
//    "primitives": [{"primitive": "/meshes/M/primitives/P", "skinned": bool, "positions": [...], "normals": [...],
//                    "min": [x,y,z], "max": [x,y,z]}]}
// positions = mesh.getPositionData(true, true), normals = mesh.getNormalsData(true, true),
// min/max = boundingBox.minimum/maximum after mesh.refreshBoundingInfo(true, true). Every
// number is a float32 value printed as the shortest double that reads back as it (so
// Math.fround(x) === x), except morph weights, which are Babylon's doubles; NaN prints as
// null. "skinned" is false for a primitive without JOINTS_0/WEIGHTS_0 (returned as loaded).
// Without --animation (or with "rest") the rest pose is used; times are then ignored
// (one line).
//
// --requests FILE: {"file": PATH, "skin": N, "poses": [{"animation": A|null, "time": t}, ...]}
// prints one line per pose, in order (the same line format).
//
// How glTF primitives become Babylon meshes (@babylonjs/loaders 9.28 glTFLoader.pure.js,
// _loadMeshAsync / _loadMeshPrimitiveAsync):
//  * one Babylon Mesh per primitive per node: a glTF mesh with one primitive becomes one
//    Mesh named after the node (node.name or "node<i>"); with several primitives the node
//    becomes a TransformNode of that name whose children are Meshes named
//    "<name>_primitive<p>", in primitive order;
//  * skinned primitives are never instances (createInstances skips nodes with a skin), so a
//    glTF mesh used by two skinned nodes gives two Meshes with the same primitive pointer;
//  * each Mesh records its glTF pointer "/meshes/M/primitives/P" in
//    _internalMetadata.gltf.pointers (AddPointerMetadata): that is the "primitive" printed
//    here, for every Mesh whose skeleton is this skin, in scene.meshes order (node load
//    order, then primitive order). A primitive without JOINTS_0/WEIGHTS_0 on a skinned node
//    still gets the skeleton but is not skinned by ApplySkeleton (its data come back as
//    loaded, morphs applied).
//  * morph targets: one MorphTargetManager per Mesh; target k's positions/normals are stored
//    as Float32Array(base + delta) (float32 sum); its initial influence is node.weights[k],
//    else mesh.weights[k], else 0; a weights channel animates every primitive's target k.
// The mesh's own TRS is ignored for skinned nodes, and so are extra transforms: positions
// are in the skinned mesh's own space, which depends only on the skeleton's matrices.
// tests/oracle/MESH_NOTES.md has the arithmetic of ApplySkeleton and ApplyMorph.

import { readFileSync } from "node:fs";

import { FPS, loadBytes, saveNodes } from "./babylon_common.mjs";

// float32 values print as the shortest double that round-trips (what JSON.stringify does
// for a double holding a float32 value); -0 stays -0 so signs compare too.
const f32 = (a) => Array.from(a, (x) => (Object.is(x, -0) ? "-0" : x));
const stringify = (obj) => JSON.stringify(obj).replace(/"-0"/g, "-0");

function pointerOf(mesh) {
    const p = mesh._internalMetadata?.gltf?.pointers ?? [];
    return p.find((s) => /^\/meshes\/\d+\/primitives\/\d+$/.test(s)) ?? null;
}

export async function loadAsset(path) {
    const bytes = new Uint8Array(readFileSync(path));
    const isGlb = bytes.length >= 4 && new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true) === 0x46546c67;
    const { engine, scene } = await loadBytes(bytes, isGlb ? ".glb" : ".gltf");
    // Everything a clip can move, as loaded: TRS of every node and every morph influence.
    const restoreNodes = saveNodes(scene);
    const targets = [];
    for (const m of scene.meshes) {
        const mtm = m.morphTargetManager;
        if (!mtm) continue;
        for (let k = 0; k < mtm.numTargets; k++) targets.push({ t: mtm.getTarget(k), w: mtm.getTarget(k).influence });
    }
    const restore = () => {
        restoreNodes();
        for (const { t, w } of targets) t.influence = w;
    };
    return { engine, scene, restore };
}

function findGroup(scene, animation) {
    const groups = scene.animationGroups;
    if (typeof animation === "number" || /^\d+$/.test(String(animation))) {
        const g = groups[Number(animation)];
        if (g) return g;
    }
    const g = groups.find((x) => x.name === animation);
    if (!g) throw new Error(`animation ${animation} not found (have: ${groups.map((x) => x.name).join(", ")})`);
    return g;
}

function skeletonOf(scene, skin) {
    const sk = scene.skeletons.find((s) => s.id === `skeleton${skin}`);
    if (!sk) throw new Error(`skin ${skin} not found (have: ${scene.skeletons.map((s) => s.id).join(", ")})`);
    return sk;
}

/** The current state of every mesh the skeleton deforms, as one answer line. */
function snapshot(scene, sk, normals) {
    sk.prepare(true);
    const prims = [];
    const weights = new Map();
    for (const mesh of scene.meshes) {
        if (mesh.skeleton !== sk || mesh.getTotalVertices() === 0) continue;
        const primitive = pointerOf(mesh);
        const skinned = !!(mesh.getVerticesData("matricesIndices") && mesh.getVerticesData("matricesWeights"));
        const item = { primitive, skinned, positions: f32(mesh.getPositionData(true, true)) };
        if (normals) {
            const n = mesh.getNormalsData(true, true);
            if (n) item.normals = f32(n);
        }
        mesh.refreshBoundingInfo(true, true);
        const bb = mesh.getBoundingInfo().boundingBox;
        item.min = f32([bb.minimum.x, bb.minimum.y, bb.minimum.z]);
        item.max = f32([bb.maximum.x, bb.maximum.y, bb.maximum.z]);
        prims.push(item);
        const mtm = mesh.morphTargetManager;
        const meshPtr = primitive ? primitive.replace(/\/primitives\/\d+$/, "") : null;
        if (mtm && meshPtr && !weights.has(meshPtr)) {
            const w = [];
            for (let k = 0; k < mtm.numTargets; k++) w.push(mtm.getTarget(k).influence);
            weights.set(meshPtr, w);
        }
    }
    return { morphWeights: [...weights].map(([mesh, w]) => ({ mesh, weights: w })), primitives: prims };
}

/** Poses [{animation, time}] in order; calls emit(line) for each. */
export function poseAll(asset, skin, poses, normals, emit) {
    const { scene, restore } = asset;
    const sk = skeletonOf(scene, skin);
    for (const { animation, time } of poses) {
        restore();
        let g = null;
        if (animation !== null && animation !== undefined && animation !== "rest") {
            g = findGroup(scene, animation);
            g.start(false, 1, g.from, g.to);
            g.pause();
            g.goToFrame(time * FPS);
        }
        const snap = snapshot(scene, sk, normals);
        if (g) g.stop();
        emit({ time: g ? time : null, animation: g ? g.name : null, ...snap });
    }
    restore();
}

function usage() {
    console.error("usage: babylon_mesh.mjs FILE [--skin N] [--animation NAME|INDEX] [--times T,...] [--no-normals]\n" +
        "       babylon_mesh.mjs --requests FILE.json");
    return 2;
}

async function main(argv) {
    let file = null;
    let skin = 0;
    let animation = null;
    let times = [0];
    let normals = true;
    let requests = null;
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === "--skin") skin = Number(argv[++i]);
        else if (a === "--animation") animation = argv[++i];
        else if (a === "--times") times = argv[++i].split(",").map(Number);
        else if (a === "--no-normals") normals = false;
        else if (a === "--requests") requests = JSON.parse(readFileSync(argv[++i], "utf8"));
        else if (a.startsWith("--")) return usage();
        else if (file === null) file = a;
        else return usage();
    }
    let poses;
    if (requests) {
        file = requests.file;
        skin = requests.skin ?? 0;
        poses = requests.poses;
        if (requests.normals === false) normals = false;
    } else {
        if (file === null || !Number.isInteger(skin) || times.some((t) => !Number.isFinite(t))) return usage();
        poses = animation === null || animation === "rest" ? [{ animation: null, time: 0 }] : times.map((time) => ({ animation, time }));
    }
    const asset = await loadAsset(file);
    const out = [];
    poseAll(asset, skin, poses, normals, (line) => out.push(stringify(line)));
    process.stdout.write(out.join("\n") + "\n");
    asset.scene.dispose();
    asset.engine.dispose();
    return 0;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
    process.exitCode = await main(process.argv.slice(2));
}
