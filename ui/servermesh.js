// The server-skinned mesh (POST /pose with "output": ["vertices"], docs/mesh.md)
// next to the page's own skinning: the page skins on the GPU from the
// server's final matrices; the daemon skins the same primitives on its CPU
// as Babylon's getPositionData(true, true). Both are in the mesh's own space,
// so the overlay is drawn with the same model matrix, and the panel shows
// how far apart they are (the page's matrices skinned here in doubles, as the
// vertex shader does in float32, against the daemon's positions).

// Skinned positions of primitive `p` (position, joints, weights: 4
// influences) from mat3x4 final matrices `mats` (12 floats each, rows).
export function skinPositions(p, mats) {
  const n = p.position.length / 3, out = new Float64Array(3 * n);
  for (let i = 0; i < n; i++) {
    const x = p.position[3 * i], y = p.position[3 * i + 1], z = p.position[3 * i + 2];
    for (let k = 0; k < 4; k++) {
      const w = p.weights[4 * i + k];
      if (!w) continue;
      const m = 12 * p.joints[4 * i + k];
      for (let c = 0; c < 3; c++)
        out[3 * i + c] += w * (mats[m + 4 * c] * x + mats[m + 4 * c + 1] * y + mats[m + 4 * c + 2] * z + mats[m + 4 * c + 3]);
    }
  }
  return out;
}

// The daemon's "vertices" answer against the page's primitives, matched by
// JSON pointer ("/meshes/M/primitives/P"). Returns { prims: [{ positions
// (Float32Array), indices }], vertices, worst, size, unmatched } where worst
// is the largest distance between a page-skinned and a server-skinned
// vertex and size the largest extent of the server's mesh; a count mismatch
// or a non-finite number is an error naming the primitive.
export function compareVertices(mesh, mats, answer) {
  if (!Array.isArray(answer)) throw new Error(`the pose answer has no "vertices" list`);
  const byPtr = new Map(answer.map((a) => [a.primitive, a]));
  const prims = [], lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  let worst = 0, vertices = 0, unmatched = 0;
  const seen = new Set();
  for (const p of mesh.primitives) {
    const a = byPtr.get(p.pointer);
    if (!a || seen.has(p.pointer)) { unmatched++; continue; }
    seen.add(p.pointer);
    const n = p.position.length / 3;
    if (!Array.isArray(a.positions) || a.positions.length !== 3 * n)
      throw new Error(`${p.pointer}: the daemon answers ${a.positions?.length} coordinates, the GLB has ${3 * n}`);
    const mine = skinPositions(p, mats), theirs = Float32Array.from(a.positions);
    for (let i = 0; i < n; i++) {
      const d = Math.hypot(mine[3 * i] - theirs[3 * i], mine[3 * i + 1] - theirs[3 * i + 1], mine[3 * i + 2] - theirs[3 * i + 2]);
      if (!Number.isFinite(d)) throw new Error(`${p.pointer}: vertex ${i} is not finite (page ${mine.slice(3 * i, 3 * i + 3)}, daemon ${theirs.slice(3 * i, 3 * i + 3)})`);
      worst = Math.max(worst, d);
      for (let c = 0; c < 3; c++) { lo[c] = Math.min(lo[c], theirs[3 * i + c]); hi[c] = Math.max(hi[c], theirs[3 * i + c]); }
    }
    vertices += n;
    prims.push({ positions: theirs, indices: p.indices });
  }
  unmatched += answer.filter((a) => !seen.has(a.primitive)).length;
  const size = vertices ? Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) : 0;
  return { prims, vertices, worst, size, unmatched };
}

// The panel's text for a comparison made at clip time `time` (null: no clip).
export function serverMeshText(r, time) {
  if (!r) return "";
  const at = time === null ? "the stored pose" : `t = ${time.toFixed(3)} s`;
  const rel = r.size > 0 ? r.worst / r.size : 0;
  return `${r.vertices} vertices at ${at} (POST /pose "vertices")\n` +
    `max |page − daemon| = ${r.worst.toExponential(2)} (${rel.toExponential(2)} of the mesh's size ${r.size.toPrecision(4)})` +
    (r.unmatched ? `\n${r.unmatched} primitive(s) in only one of the two (not drawn)` : "");
}

// The toggle's state: one "vertices" request in flight, the latest pose
// wins. `snapshot()` gives what the page draws now ({ key, mesh, mats, time,
// body }, or null without a mesh): the answer is compared with those very
// matrices, so the numbers hold while a clip plays (the overlay is then one
// request behind the playhead). `key` changing (another skeleton) drops an
// answer on its way.
export class ServerMesh {
  constructor({ api, renderer, snapshot, current, shown, failed }) {
    Object.assign(this, { api, renderer, snapshot, current, shown, failed });
    this.on = false;
    this.busy = null;
    this.again = false;
    this.result = null;
  }

  set(on) {
    this.on = on;
    if (!on) this.clear();
    return this.update();
  }

  clear() {
    this.result = null;
    this.renderer.setServerMesh(null);
    this.shown("");
  }

  // After every pose the page draws (cheap when off).
  update() {
    if (!this.on) return Promise.resolve();
    if (this.busy) { this.again = true; return this.busy; }
    this.busy = (async () => {
      try {
        do {
          this.again = false;
          const s = this.snapshot();
          if (!s) { this.clear(); this.shown("no mesh in this page (upload the GLB here): nothing to compare"); break; }
          const answer = await this.api.poseJson(s.id, { ...s.body, output: ["vertices"] });
          if (!this.on || this.current() !== s.key) break;
          this.result = { ...compareVertices(s.mesh, s.mats, answer.vertices), time: s.time };
          this.renderer.setServerMesh(this.result.prims);
          this.shown(serverMeshText(this.result, s.time));
        } while (this.again && this.on);
      } catch (e) {
        this.on = false;
        this.clear();
        this.failed(e);
      } finally { this.busy = null; }
    })();
    return this.busy;
  }
}
