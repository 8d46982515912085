#!/usr/bin/env node
// Brute-force double-precision reference for ray hits on skinned triangles (issue 33): the
// triangles are Babylon's skinned positions (getPositionData(true, true), float32 values)
// with the primitive's indices (or 0,1,2,... when it has none), every ray tested against
// every triangle of every primitive the skin deforms, both faces, in doubles.
//
//   node ray_reference.mjs FILE [--skin N] [--animation NAME|INDEX --time T] --rays RAYS.json
//   node ray_reference.mjs FILE ... --self-check     (centroid rays; see selfCheck)
//   RAYS.json: [{"origin": [x,y,z], "direction": [x,y,z]}, ...]  (the mesh's own space)
//
// Prints one JSON line: {"hits": [hit | null, ...]} in ray order, hit =
//   {"primitive": "/meshes/M/primitives/P", "triangle": k, "t": t, "distance": t·|direction|,
//    "barycentrics": [w0, w1, w2]}   (point = w0·A + w1·B + w2·C, w0 = 1 - w1 - w2)
// The closest hit has the smallest t > 0 (Möller–Trumbore, no culling); ties keep the first
// primitive in babylon_mesh.mjs order, then the lower triangle index. Rays that graze an edge
// or vertex can hit either neighbour in a float32 kernel: compare those by distance alone.
// Import hitsFor(primitives, rays) to use it on a daemon's own "vertices" answer.

import { readFileSync } from "node:fs";
import { loadAsset } from "./babylon_mesh.mjs";

const EPS = 1e-12;

/** Möller–Trumbore in doubles: [t, w1, w2] or null. */
function intersect(o, d, a, b, c) {
    const e1 = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    const e2 = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    const p = [d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]];
    const det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
    if (Math.abs(det) < EPS) return null;
    const inv = 1 / det;
    const s = [o[0] - a[0], o[1] - a[1], o[2] - a[2]];
    const u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) * inv;
    if (u < 0 || u > 1) return null;
    const q = [s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]];
    const v = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * inv;
    if (v < 0 || u + v > 1) return null;
    const t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * inv;
    return t > 0 ? [t, u, v] : null;
}

/** primitives: [{primitive, positions, indices|null}]; rays: [{origin, direction}]. */
export function hitsFor(primitives, rays) {
    return rays.map(({ origin, direction }) => {
        const len = Math.hypot(direction[0], direction[1], direction[2]);
        let best = null;
        for (let { primitive, positions, indices } of primitives) {
            if (indices && !indices.length) indices = null;
            const n = indices ? indices.length / 3 : positions.length / 9;
            const at = (i) => [positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]];
            for (let k = 0; k < n; k++) {
                const [i0, i1, i2] = indices ? [indices[3 * k], indices[3 * k + 1], indices[3 * k + 2]] : [3 * k, 3 * k + 1, 3 * k + 2];
                const h = intersect(origin, direction, at(i0), at(i1), at(i2));
                if (h && (!best || h[0] < best.t))
                    best = { primitive, triangle: k, t: h[0], distance: h[0] * len, barycentrics: [1 - h[1] - h[2], h[1], h[2]] };
            }
        }
        return best;
    });
}

/**
 * --self-check: a ray from outside through each triangle's centroid, along its normal,
 * must hit no farther than that centroid, and when it hits that triangle the barycentrics
 * are 1/3 each (within 1e-9).
 */
function selfCheck(prims) {
    let bad = 0;
    let rays = 0;
    for (const { primitive, positions, indices } of prims) {
        const n = indices ? indices.length / 3 : positions.length / 9;
        for (let k = 0; k < n; k += Math.max(1, Math.floor(n / 64))) {
            const ix = indices ? [indices[3 * k], indices[3 * k + 1], indices[3 * k + 2]] : [3 * k, 3 * k + 1, 3 * k + 2];
            const [a, b, c] = ix.map((i) => [positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]]);
            const cen = [0, 1, 2].map((j) => (a[j] + b[j] + c[j]) / 3);
            const e1 = [0, 1, 2].map((j) => b[j] - a[j]), e2 = [0, 1, 2].map((j) => c[j] - a[j]);
            const nr = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
            const len = Math.hypot(...nr);
            if (len < 1e-12) continue;
            const dir = nr.map((x) => -x / len);
            const origin = cen.map((x, j) => x - 1000 * dir[j]);
            const [h] = hitsFor(prims, [{ origin, direction: dir }]);
            rays++;
            const ok = h && h.distance <= 1000 + 1e-6 && (h.primitive !== primitive || h.triangle !== k || h.barycentrics.every((w) => Math.abs(w - 1 / 3) < 1e-9));
            if (!ok) {
                bad++;
                if (bad <= 5) console.error(`ray_reference: ${primitive} triangle ${k}: ${JSON.stringify(h)}`);
            }
        }
    }
    process.stdout.write(`ray_reference self-check: ${rays} rays, ${bad} wrong\n`);
    return bad ? 1 : 0;
}

async function main(argv) {
    let file = null, skin = 0, animation = null, time = 0, rays = null, self = false;
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === "--self-check") self = true;
        else
        if (argv[i] === "--skin") skin = Number(argv[++i]);
        else if (argv[i] === "--animation") animation = argv[++i];
        else if (argv[i] === "--time") time = Number(argv[++i]);
        else if (argv[i] === "--rays") rays = JSON.parse(readFileSync(argv[++i], "utf8"));
        else file = argv[i];
    }
    if (!file || (!self && !Array.isArray(rays))) {
        console.error("usage: ray_reference.mjs FILE [--skin N] [--animation NAME|INDEX --time T] --rays RAYS.json");
        return 2;
    }
    const { engine, scene, restore } = await loadAsset(file);
    const sk = scene.skeletons.find((s) => s.id === `skeleton${skin}`);
    restore();
    if (animation !== null) {
        const g = scene.animationGroups[Number(animation)] ?? scene.animationGroups.find((x) => x.name === animation);
        g.start(false, 1, g.from, g.to);
        g.pause();
        g.goToFrame(time * 60);
    }
    sk.prepare(true);
    const prims = scene.meshes
        .filter((m) => m.skeleton === sk && m.getTotalVertices() > 0)
        .map((m) => ({
            primitive: (m._internalMetadata?.gltf?.pointers ?? []).find((s) => /^\/meshes\/\d+\/primitives\/\d+$/.test(s)),
            positions: m.getPositionData(true, true),
            // A non-indexed primitive (Fox) has getIndices() === []: consecutive triples.
            indices: m.getIndices()?.length ? m.getIndices() : null,
        }));
    const rc = self ? selfCheck(prims) : (process.stdout.write(JSON.stringify({ hits: hitsFor(prims, rays) }) + "\n"), 0);
    engine.dispose();
    return rc;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
    process.exitCode = await main(process.argv.slice(2));
}
