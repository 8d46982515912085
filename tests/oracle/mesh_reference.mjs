#!/usr/bin/env node
// An executable form of MESH_NOTES.md: ApplyMorph + ApplySkeleton rewritten from the
// notes with explicit float32 (Math.fround / Float32Array) and double steps, compared
// bit for bit (Object.is, so -0 counts) with Babylon's getPositionData(true, true) and
// getNormalsData(true, true) for skin 0 at 0.37 of the first clip.
//
//   node mesh_reference.mjs FILE...    prints "compared N mismatch M" per file
import { loadAsset } from "./babylon_mesh.mjs";
const fr = Math.fround;
function ref(mesh, sk, kind) {
  let data = Float32Array.from(mesh.getVerticesData(kind));
  const mtm = mesh.morphTargetManager;
  if (mtm) {
    const out = new Float32Array(data.length);
    for (let i = 0; i < data.length; i++) {
      let v = data[i];
      for (let k = 0; k < mtm.numTargets; k++) { const t = mtm.getTarget(k); const w = t.influence; if (w !== 0) { const td = kind === "position" ? t.getPositions() : t.getNormals(); if (td) v += (td[i] - data[i]) * w; } }
      out[i] = v;
    }
    data = out;
  }
  const J = mesh.getVerticesData("matricesIndices"), W = mesh.getVerticesData("matricesWeights");
  const J2 = mesh.numBoneInfluencers > 4 ? mesh.getVerticesData("matricesIndicesExtra") : null, W2 = mesh.numBoneInfluencers > 4 ? mesh.getVerticesData("matricesWeightsExtra") : null;
  const S = sk.getTransformMatrices(mesh);
  const out = new Float32Array(data.length);
  for (let v = 0; v < data.length / 3; v++) {
    const m = new Float32Array(16);
    const add = (j, w) => { if (w > 0) { const o = Math.floor(j * 16); for (let i = 0; i < 16; i++) m[i] = m[i] + fr(S[o + i] * w); } };
    for (let i = 0; i < 4; i++) add(J[4 * v + i], W[4 * v + i]);
    if (J2 && W2) for (let i = 0; i < 4; i++) add(J2[4 * v + i], W2[4 * v + i]);
    const x = data[3 * v], y = data[3 * v + 1], z = data[3 * v + 2];
    if (kind === "position") {
      const rx = x * m[0] + y * m[4] + z * m[8] + m[12], ry = x * m[1] + y * m[5] + z * m[9] + m[13], rz = x * m[2] + y * m[6] + z * m[10] + m[14];
      const rw = 1 / (x * m[3] + y * m[7] + z * m[11] + m[15]);
      out[3 * v] = rx * rw; out[3 * v + 1] = ry * rw; out[3 * v + 2] = rz * rw;
    } else {
      out[3 * v] = x * m[0] + y * m[4] + z * m[8]; out[3 * v + 1] = x * m[1] + y * m[5] + z * m[9]; out[3 * v + 2] = x * m[2] + y * m[6] + z * m[10];
    }
  }
  return out;
}
for (const f of process.argv.slice(2)) {
  const a = await loadAsset(f);
  process.exitCode = 0;
  const sk = a.scene.skeletons[0];
  const g = a.scene.animationGroups[0];
  a.restore(); g.start(false, 1, g.from, g.to); g.pause(); g.goToFrame(g.to * 0.37); sk.prepare(true);
  let bad = 0, n = 0;
  for (const mesh of a.scene.meshes) {
    if (mesh.skeleton !== sk || !mesh.getTotalVertices()) continue;
    for (const kind of ["position", "normal"]) {
      const b = kind === "position" ? mesh.getPositionData(true, true) : mesh.getNormalsData(true, true);
      if (!b) continue;
      const r = ref(mesh, sk, kind);
      for (let i = 0; i < b.length; i++) { n++; if (!Object.is(b[i], r[i])) { if (bad < 3) console.error(f, mesh.name, kind, i, b[i], r[i]); bad++; } }
    }
  }
  if (bad) process.exitCode = 1;
  console.error(f, "compared", n, "mismatch", bad, "infl", a.scene.meshes.map(m=>m.numBoneInfluencers).join(","));
}
