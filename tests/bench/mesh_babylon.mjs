#!/usr/bin/env node
// CPU skinning speed of the JavaScript baselines of issue 33, on one core, same asset and
// pose: Babylon.js 9.34 `mesh.getPositionData(true, true)` over every skinned primitive,
// and three.js `SkinnedMesh.applyBoneTransform` called per vertex (the loop three.js users
// write for server-side hit tests and bounds; no morphs, as applyBoneTransform does none).
//
//   node tests/bench/mesh_babylon.mjs [--json] [--seconds S] [ASSET.glb ...]
//
// Needs `npm install` in tests/oracle (Babylon) and in tests/bench (three, pinned in
// tests/bench/package.json). The pose: skin 0, first clip at 0.37 of its length. The
// three.js mesh is built from Babylon's own data (positions, joints, weights) with every
// bone's matrixWorld set to Babylon's skinning matrix and identity bone inverses and bind
// matrix, so both skin the same vertices with the same matrices; the script checks that
// they agree within 1e-4 relative. Prints per asset the vertices and the median of 5
// samples of vertices/s for each (one JSON line per asset with --json), for make bench-mesh
// to divide by.

import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const { loadAsset } = await import(join(here, "../oracle/babylon_mesh.mjs"));
const THREE = await import(pathToFileURL(join(here, "node_modules/three/build/three.module.js")).href);

function median(a) {
    const s = [...a].sort((x, y) => x - y);
    return s[Math.floor(s.length / 2)];
}

/** Median over 5 samples of work-units per second; each sample runs for `seconds`. */
function rate(fn, units, seconds) {
    for (let i = 0; i < 3; i++) fn();
    const samples = [];
    for (let s = 0; s < 5; s++) {
        let n = 0;
        const t0 = process.hrtime.bigint();
        let dt = 0;
        do {
            fn();
            n++;
            dt = Number(process.hrtime.bigint() - t0) / 1e9;
        } while (dt < seconds);
        samples.push((n * units) / dt);
    }
    return median(samples);
}

async function benchAsset(file, seconds) {
    const asset = await loadAsset(file);
    const { scene, restore } = asset;
    const sk = scene.skeletons.find((s) => s.id === "skeleton0");
    const g = scene.animationGroups[0];
    restore();
    if (g) {
        g.start(false, 1, g.from, g.to);
        g.pause();
        g.goToFrame(g.to * 0.37);
    }
    sk.prepare(true);
    const meshes = scene.meshes.filter((m) => m.skeleton === sk && m.getTotalVertices() > 0 && m.getVerticesData("matricesIndices"));
    const vertices = meshes.reduce((n, m) => n + m.getTotalVertices(), 0);
    let sink = 0;
    const babylon = rate(() => {
        for (const m of meshes) sink += m.getPositionData(true, true)[0];
    }, vertices, seconds);

    // The same meshes as three.js SkinnedMeshes sharing one skeleton.
    const S = sk.getTransformMatrices(meshes[0]);
    const nb = S.length / 16;
    const bones = [];
    for (let j = 0; j < nb; j++) {
        const b = new THREE.Bone();
        b.matrixWorld.fromArray(S, 16 * j);
        bones.push(b);
    }
    const skeleton = new THREE.Skeleton(bones, bones.map(() => new THREE.Matrix4()));
    const three = meshes.map((m) => {
        const geo = new THREE.BufferGeometry();
        geo.setAttribute("position", new THREE.BufferAttribute(Float32Array.from(m.getVerticesData("position")), 3));
        geo.setAttribute("skinIndex", new THREE.BufferAttribute(Uint16Array.from(m.getVerticesData("matricesIndices")), 4));
        geo.setAttribute("skinWeight", new THREE.BufferAttribute(Float32Array.from(m.getVerticesData("matricesWeights")), 4));
        const sm = new THREE.SkinnedMesh(geo);
        sm.bind(skeleton, new THREE.Matrix4());
        return { sm, pos: geo.attributes.position, out: new Float32Array(3 * m.getTotalVertices()) };
    });
    const v = new THREE.Vector3();
    const skinThree = () => {
        for (const { sm, pos, out } of three) {
            for (let i = 0; i < pos.count; i++) {
                v.fromBufferAttribute(pos, i);
                sm.applyBoneTransform(i, v);
                out[3 * i] = v.x;
                out[3 * i + 1] = v.y;
                out[3 * i + 2] = v.z;
            }
        }
    };
    const threeRate = rate(skinThree, vertices, seconds);

    // Same pose: three's result within 1e-4 relative of Babylon's (meshes with 4 influences).
    let worst = 0;
    meshes.forEach((m, k) => {
        if (m.numBoneInfluencers > 4 || m.morphTargetManager) return;
        const b = m.getPositionData(true, true);
        const t = three[k].out;
        for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(b[i] - t[i]) / Math.max(1, Math.abs(b[i])));
    });
    if (g) g.stop();
    asset.scene.dispose();
    asset.engine.dispose();
    return { asset: file.split("/").pop(), vertices, babylon_vertices_per_s: Math.round(babylon), three_vertices_per_s: Math.round(threeRate), agree: worst, sink: sink !== 0 };
}

async function main(argv) {
    let json = false;
    let seconds = 0.3;
    const files = [];
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === "--json") json = true;
        else if (argv[i] === "--seconds") seconds = Number(argv[++i]);
        else files.push(argv[i]);
    }
    if (!files.length) for (const f of ["Fox.glb", "CesiumMan.glb", "mannequiny-0.3.0.glb"]) files.push(join(here, "../data", f));
    let bad = 0;
    for (const f of files) {
        const r = await benchAsset(f, seconds);
        delete r.sink;
        if (r.agree > 1e-4) bad++;
        if (json) process.stdout.write(JSON.stringify(r) + "\n");
        else
            process.stdout.write(`${r.asset}: ${r.vertices} vertices; Babylon getPositionData(true, true) ${(r.babylon_vertices_per_s / 1e6).toFixed(2)} M vertices/s, ` +
                `three.js applyBoneTransform ${(r.three_vertices_per_s / 1e6).toFixed(2)} M vertices/s (agree within ${r.agree.toExponential(1)})\n`);
    }
    return bad ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
