// Unit tests of the page's pure modules (ui/mat.js, ui/glb.js, ui/timing.js,
// ui/servermesh.js) under node:
// no browser needed. Prints "ui_unit: N passed, N failed".
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const UI = join(HERE, "..", "..", "ui");
const DATA = resolve(process.env.SK_TEST_DATA || join(HERE, ".."), "data");
const { compose, decompose, handedness, identity, invert, meshWorld, mul, qaxis, qmul, rayPlane, rotationOf, yawPitchRoll } = await import(join(UI, "mat.js"));
const { loadSkinnedMesh, parseGlb } = await import(join(UI, "glb.js"));
const { perFrame, readMetrics, timingText } = await import(join(UI, "timing.js"));
const { compareVertices, serverMeshText, skinPositions } = await import(join(UI, "servermesh.js"));

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else failed++;
  if (!ok || process.env.UI_TEST_DEBUG) console.log(`${ok ? "PASS" : "FAIL"}: ${what}`);
}
const close = (a, b, tol = 1e-9) => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= tol * Math.max(1, Math.abs(b[i])));
const file = (name) => { const b = readFileSync(join(DATA, name)); return b.buffer.slice(b.byteOffset, b.byteOffset + b.length); };
function throwsLike(fn, re) { try { fn(); return false; } catch (e) { return re.test(e.message); } }

// A seeded generator: the same quaternions every run.
let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 2 - 1;
const unitQ = () => { const q = [rnd(), rnd(), rnd(), rnd()], l = Math.hypot(...q); return q.map((v) => v / l); };

// ---- mat.js -------------------------------------------------------------------

let roundTrips = 0, products = 0, inverses = 0;
for (let i = 0; i < 200; i++) {
  const q = unitQ(), s = [1 + Math.abs(rnd()), 1 + Math.abs(rnd()), 1 + Math.abs(rnd())], t = [rnd(), rnd(), rnd()];
  const r = rotationOf(compose(s, q, t));
  const sign = Math.sign(r[3] * q[3] + r[0] * q[0] + r[1] * q[1] + r[2] * q[2]) || 1;
  if (close(r.map((v) => v * sign), q, 1e-9)) roundTrips++;
  // A local-axis rotate as the page sends it: q ⊗ Δ applies Δ first
  // (Babylon's row vectors: compose(q ⊗ Δ) = compose(Δ) × compose(q)).
  const d = qaxis([0, 0, 1], rnd() * 3);
  if (close(compose([1, 1, 1], qmul(q, d), [0, 0, 0]), mul(compose([1, 1, 1], d, [0, 0, 0]), compose([1, 1, 1], q, [0, 0, 0])), 1e-12)) products++;
  const m = compose(s, q, t);
  if (close(mul(m, invert(m)), identity(), 1e-9)) inverses++;
}
check(roundTrips === 200, `rotationOf(compose(s, q, t)) gives q back (${roundTrips}/200, scaled, up to sign)`);
check(products === 200, `compose(q ⊗ Δ) = compose(Δ) × compose(q): the page's local-axis rotate (${products}/200)`);
check(inverses === 200, `m × invert(m) = identity (${inverses}/200)`);
check(close(compose([1, 1, 1], [0, 0, 0, 1], [1, 2, 3]).slice(12, 15), [1, 2, 3]), "translation sits in elements 12..14 (Babylon/glTF order)");
let decomposed = 0;
for (let i = 0; i < 100; i++) {
  // Negative determinants too: the sign goes to the x scale.
  const s = [(i % 2 ? -1 : 1) * (0.5 + Math.abs(rnd())), 0.5 + Math.abs(rnd()), 0.5 + Math.abs(rnd())], m = compose(s, unitQ(), [rnd(), rnd(), rnd()]);
  const d = decompose(m);
  if (close(compose(d.scaling, d.rotationQuaternion, d.position), m, 1e-12)) decomposed++;
}
check(decomposed === 100, `compose(decompose(m)) = m, the API mesh node of a glTF matrix (${decomposed}/100, half mirrored)`);
check(close(rayPlane([0, 0, 10], [0, 0, -1], [1, 2, 3], [0, 0, 1]), [0, 0, 3]) && rayPlane([0, 0, 10], [1, 0, 0], [0, 0, 0], [0, 0, 1]) === null &&
  rayPlane([0, 0, 10], [0, 0, 1], [0, 0, 0], [0, 0, 1]) === null, "rayPlane: the drag plane hit, parallel and behind give null");

// ---- glb.js -------------------------------------------------------------------

const fox = loadSkinnedMesh(file("Fox.glb"));
const vcount = fox.primitives.reduce((n, p) => n + p.position.length / 3, 0);
check(vcount === 1728 && fox.jointCount === 24, `Fox: 1728 vertices, 24 joints (${vcount}, ${fox.jointCount})`);
const p0 = fox.primitives[0];
let sumsOk = true;
for (let i = 0; i < p0.weights.length; i += 4) {
  const w = p0.weights[i] + p0.weights[i + 1] + p0.weights[i + 2] + p0.weights[i + 3];
  if (Math.abs(w - 1) > 1e-3) sumsOk = false;
}
check(sumsOk && p0.joints.every((j) => j < 24), "Fox: weights sum to 1, joints index the skin");
check(p0.normal.length === p0.position.length && p0.normal.some((v) => v !== 0), "Fox has no NORMAL: normals are computed from the triangles");
check(close(fox.world, identity()), "Fox's skinned mesh sits at the identity");
const cesium = loadSkinnedMesh(file("CesiumMan.glb"));
check(close(cesium.world, [0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1], 1e-6),
  "CesiumMan: the mesh takes the skeleton root's parent's Z-up-to-Y-up rotation, not its own node's TRS");
// The API's "mesh" the page sends with its ops composes (Babylon's
// computeWorldMatrix: Compose(scaling, rotationQuaternion, position) × parent)
// to the very matrix the page draws the mesh with.
const composeNode = (n) => (n ? mul(compose(n.scaling, n.rotationQuaternion, n.position), composeNode(n.parent)) : identity());
check(fox.apiMesh && !fox.apiMesh.parent && close(composeNode(fox.apiMesh), identity(), 0), "Fox: the API mesh is its plain \"root\" node, the identity");
check(cesium.apiMesh && cesium.apiMesh.parent && !cesium.apiMesh.parent.parent && close(composeNode(cesium.apiMesh), cesium.world, 1e-12),
  "CesiumMan: the API mesh (Armature under Z_UP, their matrices decomposed) composes to the drawn world matrix");
// The daemon's default mesh of CesiumMan (GET /v1/skeletons/{id} "mesh", as
// skinnerd answers it): mesh node (Euler), Armature, Z_UP, __root__. Less
// __root__'s x mirror (handedness), it is the GLB's own chain the page reads.
const ROOT = { position: [0, 0, 0], rotationQuaternion: [0, 1, 0, 0], scaling: [1, 1, -1] };
const cesiumDaemon = { position: [0, 0, 0], rotation: [0, 0, 0], scaling: [1, 1, 1], parent: {
  position: [0, 0, 0], rotationQuaternion: [0, 0, -0.7071067966408613, 0.7071067657322341], scaling: [1.0000000000000009, 1.0000000000000009, 1], parent: {
    position: [0, 0, 0], rotationQuaternion: [-0.7071067811865475, 0, 0, 0.7071067811865476], scaling: [1, 1, 1], parent: ROOT } } };
check(close(handedness(cesiumDaemon), [-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], 0) && close(handedness(cesiumDaemon.parent.parent), identity(), 0) === false &&
  close(handedness({ ...ROOT }), identity(), 0) && close(handedness({ position: [0, 0, 0], parent: { ...ROOT, position: [1, 0, 0] } }), identity(), 0),
  "handedness: the x mirror of a chain topped by __root__ (rotation (0,1,0,0), scaling (1,1,-1), at the origin), else the identity");
check(close(mul(meshWorld(cesiumDaemon), handedness(cesiumDaemon)), cesium.world, 1e-6),
  "CesiumMan: the daemon's default mesh less __root__ is the world the page reads from the GLB");
const euler = [0.3, -0.7, 1.1];
check(close(meshWorld({ rotation: euler }), compose([1, 1, 1], yawPitchRoll(euler[1], euler[0], euler[2]), [0, 0, 0]), 1e-12) &&
  close(meshWorld({ rotation: [0, Math.PI / 2, 0] }), compose([1, 1, 1], qaxis([0, 1, 0], Math.PI / 2), [0, 0, 0]), 1e-12) &&
  close(meshWorld(null), identity(), 0),
  "meshWorld: an Euler rotation [x,y,z] is RotationYawPitchRoll(y, x, z); no mesh is the identity");
const robot = loadSkinnedMesh(file("RobotExpressive.glb"));
check(robot.world[0] === 100 && robot.primitives.length === 2, "RobotExpressive: skin 0's meshes under the 100× scaled parent");
check(close(composeNode(robot.apiMesh), robot.world, 1e-12), "RobotExpressive: the API mesh composes to the drawn world matrix");

check(throwsLike(() => parseGlb(new ArrayBuffer(40)), /not a GLB file/), "bytes without the glTF magic: \"not a GLB file\"");
const fb = new Uint8Array(file("Fox.glb"));
const cut = fb.slice(0, 20000).buffer;
new DataView(cut).setUint32(8, 20000, true);
check(throwsLike(() => loadSkinnedMesh(cut), /runs past/), "a GLB cut short: the chunk or accessor that runs past the end is named");
const json = JSON.stringify({ asset: { version: "2.0" }, nodes: [{ mesh: 0 }], meshes: [{ primitives: [] }] });
const jbytes = new TextEncoder().encode(json + " ".repeat((4 - (json.length % 4)) % 4));
const glb = new Uint8Array(20 + jbytes.length);
const dv = new DataView(glb.buffer);
dv.setUint32(0, 0x46546c67, true); dv.setUint32(4, 2, true); dv.setUint32(8, glb.length, true);
dv.setUint32(12, jbytes.length, true); dv.setUint32(16, 0x4e4f534a, true);
glb.set(jbytes, 20);
check(throwsLike(() => loadSkinnedMesh(glb.buffer), /no skinned mesh for skin 0/), "a GLB without a skin: \"no skinned mesh\"");

// ---- timing.js: the numbers panel never reads NaN ---------------------------------

const fresh = "# TYPE skinnerd_poses_evaluated_total counter\nskinnerd_poses_evaluated_total 0\n";
const later = 'skinnerd_request_duration_seconds_sum{route="/v1/skeletons/{id}"} 0.5\n' +
  'skinnerd_request_duration_seconds_sum{route="/v1/skeletons/{id}/pose"} 0.003\n' +
  'skinnerd_request_duration_seconds_sum{route="/v1/skeletons/{id}/poses"} 0.001\nskinnerd_poses_evaluated_total 40\n';
const m0 = readMetrics(fresh), m1 = readMetrics(later);
check(m0 && m0.sum === 0 && m0.poses === 0, "a daemon that answered no pose yet (no pose histogram): sum 0, not NaN");
check(m1 && Math.abs(m1.sum - 0.004) < 1e-15 && m1.poses === 40, "the /pose and /poses duration sums, not other routes'");
check(readMetrics("not metrics") === null, "text without skinnerd_poses_evaluated_total: null");
const pf = perFrame(m0, m1);
check(pf && Math.abs(pf.seconds - 1e-4) < 1e-15 && pf.poses === 40, "per frame = Δsum / Δposes");
check(perFrame(m1, m1) === null && perFrame(null, m1) === null, "no poses in between (a clip looping from fetched ranges): null");
// The page's stream answers count in skinnerd_poses_evaluated_total, not in
// the /pose routes' times: they are taken out (30 of the 40 poses here).
const ps = perFrame({ ...m0, untimed: 0 }, { ...m1, untimed: 30 });
check(ps && Math.abs(ps.seconds - 4e-4) < 1e-15 && ps.poses === 10, `stream poses are not timed poses: ${ps && ps.seconds} s over ${ps && ps.poses}`);
check(perFrame({ ...m1, untimed: 0 }, { ...m1, poses: 70, untimed: 30 }) === null, "only stream poses in between (playback over the stream): null, not 0 µs");
const streamText = timingText({ last: null, now: 0, window: null, total: { ...m1, untimed: 30 }, windowSeconds: 2, playing: null,
  ranges: { fps: 30, chunk: 1, ahead: 2, via: "the stream" } });
check(/daemon: 400\.0 µs per frame since it started \(10 poses over HTTP/.test(streamText) && /over the stream$/.test(streamText), `the box with stream poses: ${streamText}`);
const texts = [
  timingText({ last: null, now: 0, window: null, total: null, windowSeconds: 2, playing: null, ranges: { fps: 30, chunk: 1, ahead: 2 } }),
  timingText({ last: { ms: 4, frames: 30, at: 0 }, now: 5000, window: null, total: m0, windowSeconds: 2, playing: { fps: null, cached: 3 }, ranges: { fps: 30, chunk: 1, ahead: 2 } }),
  timingText({ last: { ms: 4, frames: 30, at: 0 }, now: 5000, window: null, total: m1, windowSeconds: 2, playing: { fps: 59.8, cached: 3 }, ranges: { fps: 30, chunk: 1, ahead: 2 } }),
  timingText({ last: { ms: 4, frames: 0, at: 0 }, now: 10, window: pf, total: m1, windowSeconds: 2, playing: null, ranges: { fps: 30, chunk: 1, ahead: 2 } }),
];
check(texts.every((t) => !/NaN|undefined|Infinity/.test(t)), `the server box in every state has no NaN, undefined or Infinity:\n${texts.join("\n--\n")}`);
check(/5 s ago/.test(texts[1]) && /since it started/.test(texts[2]) && /100\.0 µs per frame/.test(texts[3]), "the box says how old the last request is and where the daemon's number comes from");

// ---- servermesh.js: the page's skinning against the daemon's vertices ---------------

{
  const fox = loadSkinnedMesh(file("Fox.glb"));
  const joints = fox.jointCount, rest = new Float32Array(12 * joints);
  for (let j = 0; j < joints; j++) { rest[12 * j] = rest[12 * j + 5] = rest[12 * j + 10] = 1; rest[12 * j + 3] = 2; }
  const p = fox.primitives[0], skinned = skinPositions(p, rest);
  check(p.pointer === "/meshes/0/primitives/0", `Fox's primitive is named by its JSON pointer (${p.pointer})`);
  check(close(skinned.slice(0, 3), [p.position[0] + 2, p.position[1], p.position[2]], 1e-6), "identity matrices moved by x + 2 skin every vertex by x + 2");
  const answer = [{ primitive: p.pointer, positions: Array.from(skinned, (v) => Math.fround(v)) }];
  const r = compareVertices(fox, rest, answer);
  check(r.vertices === p.position.length / 3 && r.worst < 1e-4 && r.unmatched === 0 && r.prims.length === 1,
    `the same positions answered: ${r.vertices} vertices, worst ${r.worst}`);
  const moved = answer[0].positions.slice(); moved[4] += 0.5;
  check(Math.abs(compareVertices(fox, rest, [{ ...answer[0], positions: moved }]).worst - 0.5) < 1e-4, "one coordinate off by 0.5: worst 0.5");
  check(throwsLike(() => compareVertices(fox, rest, [{ ...answer[0], positions: moved.slice(3) }]), /\/meshes\/0\/primitives\/0: the daemon answers/), "a count mismatch names the primitive");
  check(compareVertices(fox, rest, [{ primitive: "/meshes/9/primitives/0", positions: [] }]).unmatched === 2, "primitives in one list only are counted, not compared");
  check(!/NaN|undefined/.test(serverMeshText(r, 1.5) + serverMeshText(r, null)), `the panel text: ${serverMeshText(r, 1.5)}`);
}

console.log(`ui_unit: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
