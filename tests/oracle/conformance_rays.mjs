#!/usr/bin/env node
// skinnerd's "hits" against ray_reference.mjs on Babylon.js 9.34's skinned triangles (issue 33).
// Run by conformance_rays.sh (which checks node and the pinned Babylon first).
//
//   node conformance_rays.mjs SKINNERD TESTS_DIR
//
// Starts SKINNERD on 127.0.0.1 (a port it picks), uploads Fox, CesiumMan, skin_mirror and
// skin_morph, and for the first two clips at four times poses Babylon (getPositionData(true,
// true), getIndices()), aims 48 rays at points inside random triangles from outside the mesh
// (every 8th aimed away, every 8th with a maxDistance, every 8th on one primitive, every 8th at
// an edge's middle and every 8th at a vertex, where neighbours tie), and asks
// the daemon for "hits" at that clip time. Each daemon hit must be the reference's: the same
// primitive and triangle, barycentrics [u, v] equal to the reference's [w1, w2] to the bit
// (the same arithmetic on the same float32 vertices), the distance within 1e-15 relative
// (|d| is Math.hypot there, a square root of the sum here). Prints
//   conformance-rays: P passed, F failed (N hits, M misses)
// Exit status: 0 all passed, 1 a mismatch, 77 the daemon does not know "hits".

import { spawn } from "node:child_process";
import http from "node:http";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { loadAsset } from "./babylon_mesh.mjs";
import { hitsFor } from "./ray_reference.mjs";

const ASSETS = ["Fox.glb", "CesiumMan.glb", "skin_mirror.glb", "skin_morph.glb"];
const say = (s) => process.stdout.write(`${s}\n`);
let passed = 0, failed = 0, hits = 0, misses = 0;
const check = (name, ok, detail) => {
    if (ok) passed++;
    else if (++failed <= 20) say(`FAIL ${name}: ${detail}`);
};

function startDaemon(bin) {
    return new Promise((resolve, reject) => {
        const p = spawn(bin, ["--listen", "127.0.0.1:0", "--max-answer-mb", "512", "--max-body", "8388608"],
            { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        p.on("error", reject);
        p.on("exit", (code) => reject(new Error(`skinnerd exited (${code})`)));
        p.stdout.on("data", (d) => {
            out += d;
            const m = /listening on [^\n]*:(\d+)\n/.exec(out);
            if (m) {
                p.removeAllListeners("exit");
                resolve({ p, port: Number(m[1]) });
            }
        });
    });
}

function req(d, method, path, body, ctype = "application/json") {
    return new Promise((resolve, reject) => {
        const data = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
        const r = http.request({ host: "127.0.0.1", port: d.port, method, path,
            headers: { "Content-Type": ctype, "Content-Length": data.length } }, (res) => {
            const chunks = [];
            res.on("data", (c) => chunks.push(c));
            res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString("utf8") }));
        });
        r.on("error", reject);
        r.end(data);
    });
}

let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

/** Babylon's posed primitives at clip `g`, `time` seconds (null: the rest pose). */
function posed(asset, g, time) {
    const { scene, restore } = asset;
    const sk = scene.skeletons.find((s) => s.id === "skeleton0");
    restore();
    if (g) {
        g.start(false, 1, g.from, g.to);
        g.pause();
        g.goToFrame(time * 60);
    }
    sk.prepare(true);
    const prims = scene.meshes.filter((m) => m.skeleton === sk && m.getTotalVertices() > 0).map((m) => ({
        primitive: (m._internalMetadata?.gltf?.pointers ?? []).find((s) => /^\/meshes\/\d+\/primitives\/\d+$/.test(s)),
        positions: m.getPositionData(true, true),
        indices: m.getIndices()?.length ? m.getIndices() : null,
    }));
    if (g) g.stop();
    return prims;
}

function makeRays(prims) {
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (const p of prims) for (let i = 0; i < p.positions.length; i++) {
        lo[i % 3] = Math.min(lo[i % 3], p.positions[i]);
        hi[i % 3] = Math.max(hi[i % 3], p.positions[i]);
    }
    const c = [0, 1, 2].map((a) => (lo[a] + hi[a]) / 2);
    const diag = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
    const rays = [];
    for (let r = 0; r < 48; r++) {
        const pi = Math.floor(rnd() * prims.length), p = prims[pi];
        const n = p.indices ? p.indices.length / 3 : p.positions.length / 9;
        const k = Math.floor(rnd() * n);
        const ix = p.indices ? [0, 1, 2].map((j) => p.indices[3 * k + j]) : [3 * k, 3 * k + 1, 3 * k + 2];
        let w1 = 0.1 + 0.5 * rnd(), w2 = 0.1 + 0.3 * rnd();
        if (r % 8 === 3) w1 = w2 = 0.5; // an edge's middle: two triangles tie
        if (r % 8 === 4) w1 = w2 = 0; // a vertex: every triangle around it ties
        const target = [0, 1, 2].map((a) => (1 - w1 - w2) * p.positions[3 * ix[0] + a] + w1 * p.positions[3 * ix[1] + a] + w2 * p.positions[3 * ix[2] + a]);
        const u = [rnd() * 2 - 1, rnd() * 2 - 1, rnd() * 2 - 1], s = Math.hypot(...u) + 1e-9;
        const origin = target.map((x, a) => x + 1.5 * diag * u[a] / s);
        const scale = 0.25 + 2 * rnd();
        const direction = origin.map((o, a) => (r % 8 === 5 ? o - c[a] : target[a] - o) * scale);
        const ray = { origin, direction };
        if (r % 8 === 6) ray.maxDistance = 1.5 * diag * (0.2 + rnd());
        if (r % 8 === 7) ray.primitive = p.primitive;
        rays.push(ray);
    }
    return rays;
}

/** The reference with the daemon's filters: one primitive, maxDistance. */
function reference(prims, ray) {
    const [h] = hitsFor(ray.primitive ? prims.filter((p) => p.primitive === ray.primitive) : prims, [ray]);
    return h && ray.maxDistance !== undefined && h.distance > ray.maxDistance ? null : h;
}

async function main([bin, tests]) {
    const d = await startDaemon(bin);
    try {
        for (const [ai, name] of ASSETS.entries()) {
            const asset = await loadAsset(join(tests, "data", name));
            const id = `r${ai}`;
            const put = await req(d, "PUT", `/v1/skeletons/${id}`, readFileSync(join(tests, "data", name)), "model/gltf-binary");
            if (put.status !== 201) throw new Error(`PUT ${name}: ${put.status} ${put.body.slice(0, 200)}`);
            const groups = asset.scene.animationGroups.slice(0, 2);
            for (const [gi, g] of [[null, null], ...groups.entries()]) {
                const times = g ? [0, 0.29, 0.61, 0.97].map((f) => f * (g.to - g.from) / 60) : [0];
                for (const time of times) {
                    const prims = posed(asset, g, time);
                    const rays = makeRays(prims);
                    const body = { ...(g ? { animation: gi, time } : {}), output: ["hits"], rays };
                    const r = await req(d, "POST", `/v1/skeletons/${id}/pose`, body);
                    if (r.status !== 200 && passed === 0 && failed === 0) {
                        say(`conformance-rays: SKIP: the daemon answers ${r.status} to "hits"`);
                        return 77;
                    }
                    const got = JSON.parse(r.body).hits;
                    const what = `${name} clip ${gi ?? "rest"} t=${time.toFixed(3)}`;
                    rays.forEach((ray, i) => {
                        const want = reference(prims, ray), h = got?.[i];
                        if (!want) {
                            misses++;
                            return check(`${what} ray ${i}`, h === null, `daemon ${JSON.stringify(h)}, reference null`);
                        }
                        hits++;
                        check(`${what} ray ${i}`, h && h.primitive === want.primitive && h.triangle === want.triangle &&
                            Object.is(h.barycentric[0], want.barycentrics[1]) && Object.is(h.barycentric[1], want.barycentrics[2]) &&
                            Math.abs(h.distance - want.distance) <= 1e-15 * want.distance,
                            `daemon ${JSON.stringify(h)}, reference ${JSON.stringify(want)}`);
                    });
                }
            }
            asset.engine.dispose();
        }
    } finally {
        d.p.kill("SIGTERM");
    }
    say(`conformance-rays: ${passed} passed, ${failed} failed (${hits} hits, ${misses} misses)`);
    return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
