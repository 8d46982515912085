#!/usr/bin/env node
// A stand-in for skinnerd's mesh outputs, to test conformance_mesh.mjs itself before (and
// apart from) the C side: answers PUT/DELETE /v1/skeletons/{id} and POST .../pose and
// .../poses with "vertices", "normals" and "bounds" computed by Babylon (babylon_mesh.mjs),
// printed as float32 shortest round trip, in the answer forms of proto/ (a range answers
// {"results": [...]}). Other outputs are a 422 at /output/N, as skinnerd's.
//
//   node conformance_mesh.mjs "$(pwd)/tests/oracle/fake_mesh_daemon.mjs" tests   -> all pass
//   FAKE_MESH_FAULT=1 ...   one position of each answer one float32 ulp off -> reports it
//
// Not a test of skinnerd: a test of the comparison, the forms and the reports.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAsset } from "./babylon_mesh.mjs";

const FPS = 60;
const FAULT = process.env.FAKE_MESH_FAULT === "1";
const dir = mkdtempSync(join(tmpdir(), "fake-mesh-"));
const store = new Map();
// A failed Babylon load leaves promises that throw later; a stand-in shrugs them off.
process.on("uncaughtException", (e) => process.stderr.write(`fake_mesh_daemon: ${e.message}\n`));

function f32str(x) {
    if (Object.is(x, -0)) return "-0";
    if (x === 0) return "0";
    for (let p = 1; p <= 9; p++) {
        const s = Number(x.toPrecision(p));
        if (Math.fround(s) === x) return JSON.stringify(s);
    }
    return JSON.stringify(x);
}
const nums = (a) => `[${Array.from(a, f32str).join(",")}]`;

function glbJson(bytes) {
    const len = bytes.readUInt32LE(12);
    return JSON.parse(bytes.subarray(20, 20 + len).toString("utf8"));
}

function answer(entry, pose) {
    const { asset, json } = entry;
    const { scene, restore } = asset;
    const sk = scene.skeletons.find((s) => s.id === `skeleton${entry.skin}`);
    restore();
    let group = null;
    if (pose.animation !== undefined) {
        const k = Number(pose.animation);
        const name = json.animations[k].name || `animation${k}`;
        group = scene.animationGroups.find((g) => g.name === name);
        group.start(false, 1, group.from, group.to);
        group.pause();
        const f = (pose.time ?? 0) * FPS;
        group.goToFrame(pose.loop ? f % group.to : f);
    }
    const layers = (pose.layers ?? []).map((l) => {
        const name = json.animations[l.animation].name || `animation${l.animation}`;
        const g = scene.animationGroups.find((x) => x.name === name);
        g.start(false, 1, g.from, g.to);
        g.pause();
        g.weight = l.weight;
        return { g, time: l.time + (pose.time ?? 0) };
    });
    for (const l of layers) l.g.goToFrame(l.time * FPS, true);
    if (layers.length) scene._animate();
    sk.prepare(true);
    const verts = [];
    const bounds = [];
    for (const mesh of scene.meshes) {
        if (mesh.skeleton !== sk || mesh.getTotalVertices() === 0) continue;
        if (!mesh.getVerticesData("matricesIndices")) continue;
        const primitive = mesh._internalMetadata.gltf.pointers.find((s) => s.startsWith("/meshes/"));
        const p = mesh.getPositionData(true, true);
        if (FAULT) {
            const i = Math.min(7, p.length - 1);
            const u = new Uint32Array(p.buffer, p.byteOffset, p.length);
            u[i] += 1;
        }
        let item = `{"primitive":${JSON.stringify(primitive)},"positions":${nums(p)}`;
        const n = (pose.output ?? []).includes("normals") ? mesh.getNormalsData(true, true) : null;
        if (n) item += `,"normals":${nums(n)}`;
        verts.push(item + "}");
        mesh.refreshBoundingInfo(true, true);
        const bb = mesh.getBoundingInfo().boundingBox;
        bounds.push(`{"primitive":${JSON.stringify(primitive)},"min":${nums([bb.minimum.x, bb.minimum.y, bb.minimum.z])},"max":${nums([bb.maximum.x, bb.maximum.y, bb.maximum.z])}}`);
    }
    if (group) group.stop();
    for (const l of layers) {
        l.g.stop();
        l.g.weight = -1;
    }
    restore();
    const parts = [];
    const final = nums(sk._transformMatrices);
    for (const o of pose.output ?? []) {
        if (o === "final") parts.push(`"final":${final}`);
        if (o === "vertices") parts.push(`"vertices":[${verts.join(",")}]`);
        if (o === "bounds") parts.push(`"bounds":[${bounds.join(",")}]`);
    }
    return `{${parts.join(",")}}`;
}

function poseText(entry, pose) {
    const bad = (pose.output ?? []).findIndex((o) => !["final", "vertices", "normals", "bounds"].includes(o));
    if (bad >= 0) return { status: 422, text: JSON.stringify({ status: 422, detail: "unknown output", pointer: `/output/${bad}` }) };
    let times = null;
    if (Array.isArray(pose.times)) times = pose.times;
    else if (pose.fps !== undefined) {
        times = [];
        for (let k = 0; pose.from + k / pose.fps <= pose.to; k++) times.push(pose.from + k / pose.fps);
    }
    if (times) return { status: 200, text: `{"results":[${times.map((time) => answer(entry, { ...pose, time })).join(",")}]}` };
    return { status: 200, text: answer(entry, pose) };
}

const server = http.createServer((rq, rs) => {
    const chunks = [];
    rq.on("data", (c) => chunks.push(c));
    rq.on("end", async () => {
        const body = Buffer.concat(chunks);
        const m = /^\/v1\/skeletons\/([A-Za-z0-9._-]+)(\/pose|\/poses)?(?:\?skin=(\d+))?$/.exec(rq.url);
        const send = (status, text) => {
            rs.writeHead(status, { "Content-Type": "application/json" });
            rs.end(text);
        };
        try {
            if (!m) return send(404, "{}");
            const [, id, route, skin] = m;
            if (rq.method === "PUT" && !route) {
                const isGlb = body.readUInt32LE(0) === 0x46546c67;
                const file = join(dir, `${id}.${isGlb ? "glb" : "gltf"}`);
                writeFileSync(file, body);
                const json = isGlb ? glbJson(body) : JSON.parse(body.toString("utf8"));
                // As skinnerd should: refuse what Babylon cannot load or skins to NaN.
                let asset;
                try {
                    asset = await loadAsset(file);
                } catch (err) {
                    return send(422, JSON.stringify({ status: 422, detail: String(err).slice(0, 100), pointer: "/meshes/0" }));
                }
                const e = { asset, json, skin: Number(skin ?? 0) };
                if (/NaN|null/.test(answer(e, { output: ["vertices", "normals"] }))) {
                    asset.engine.dispose();
                    return send(422, JSON.stringify({ status: 422, detail: "NaN vertices", pointer: "/meshes/0/primitives/0/attributes/POSITION" }));
                }
                store.set(id, e);
                return send(201, JSON.stringify({ id }));
            }
            if (rq.method === "DELETE" && !route) {
                const e = store.get(id);
                if (e) e.asset.engine.dispose();
                store.delete(id);
                return send(204, "");
            }
            const e = store.get(id);
            if (!e) return send(404, "{}");
            const req = JSON.parse(body.toString("utf8"));
            if (route === "/pose") {
                const { status, text } = poseText(e, req);
                return send(status, text);
            }
            if (route === "/poses") {
                const texts = req.poses.map((p) => poseText(e, p));
                const bad = texts.find((t) => t.status !== 200);
                return bad ? send(bad.status, bad.text) : send(200, `{"results":[${texts.map((t) => t.text).join(",")}]}`);
            }
            return send(405, "{}");
        } catch (err) {
            return send(500, JSON.stringify({ detail: String(err) }));
        }
    });
});
server.keepAliveTimeout = 300000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening on 127.0.0.1:${server.address().port}\n`));
process.on("SIGTERM", () => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
});
