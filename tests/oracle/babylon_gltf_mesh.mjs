#!/usr/bin/env node
// Babylon.js oracle for a glTF skin's default mesh (issue 13): loads each
// asset with @babylonjs/loaders (NullEngine, left-handed scene: the loader's
// defaults), and for every skeleton prints the chain of TransformNodes above
// the first mesh that uses it (scene.meshes.find(m => m.skeleton === sk), as
// babylon_gltf_ctrl.mjs picks it), as exact doubles, and that mesh's world
// matrix (computeWorldMatrix(true), float32 values).
//
//   node babylon_gltf_mesh.mjs --regenerate    rewrites tests/gltf/mesh/expected.json
//
// tests/check_sk_gltf_mesh compares the chain JSON and the world matrix bit
// for bit with sk_gltf_default_mesh + sk_ops_parse_mesh.

import { readFileSync, writeFileSync } from "node:fs";

import { loadBytes, meshChain } from "./babylon_common.mjs";

const here = new URL(".", import.meta.url);
const ASSETS = ["CesiumMan.glb", "Fox.glb", "RiggedFigure.glb", "RiggedSimple.glb", "RecursiveSkeletons.glb",
    "RobotExpressive.glb", "SimpleSkin.gltf", "SimpleSkin-multi-target.gltf", "mannequiny-0.3.0.glb",
    "gltf/above_root.gltf", "gltf/mesh_transform.gltf", "gltf/nonjoint_between.gltf", "gltf/scales.gltf", "gltf/no_ibm.gltf",
    "gltf/mesh_chain.gltf"];

async function runAsset(asset) {
    const bytes = new Uint8Array(readFileSync(new URL(`../data/${asset}`, here)));
    const { engine, scene } = await loadBytes(bytes, asset.endsWith(".glb") ? ".glb" : ".gltf");
    const out = [];
    for (const sk of scene.skeletons) {
        const skin = Number(sk.id.replace("skeleton", ""));
        const mesh = scene.meshes.find((m) => m.skeleton === sk);
        const world = mesh ? Array.from(mesh.computeWorldMatrix(true).m) : null;
        out.push({ asset, skin, mesh: meshChain(mesh ?? null), world });
    }
    engine.dispose();
    return out;
}

async function main(argv) {
    if (argv[0] !== "--regenerate") {
        console.error("usage: babylon_gltf_mesh.mjs --regenerate");
        return 2;
    }
    const all = [];
    for (const a of ASSETS) all.push(...(await runAsset(a)));
    writeFileSync(new URL("../gltf/mesh/expected.json", here), "[\n" + all.map((e) => JSON.stringify(e)).join(",\n") + "\n]\n");
    console.error(`${all.length} skins`);
    return 0;
}

process.exitCode = await main(process.argv.slice(2));
