// Reads what the page draws from a GLB: the skinned mesh's primitives
// (POSITION, NORMAL, JOINTS_0, WEIGHTS_0, indices) and the world matrix
// Babylon.js gives that mesh. Every offset and count is checked; a bad
// file throws an Error whose message names the field.
import { compose, decompose, identity, mul } from "./mat.js";

const COMPONENTS = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT4: 16 };
const TYPES = {
  5120: [Int8Array, 1, 127], 5121: [Uint8Array, 1, 255], 5122: [Int16Array, 2, 32767],
  5123: [Uint16Array, 2, 65535], 5125: [Uint32Array, 4, 0], 5126: [Float32Array, 4, 0],
};

export function parseGlb(buf) {
  const dv = new DataView(buf);
  if (buf.byteLength < 20 || dv.getUint32(0, true) !== 0x46546c67)
    throw new Error("not a GLB file (no \"glTF\" magic)");
  const total = Math.min(dv.getUint32(8, true), buf.byteLength);
  let off = 12, json = null, bin = null;
  while (off + 8 <= total) {
    const len = dv.getUint32(off, true), type = dv.getUint32(off + 4, true);
    if (off + 8 + len > total) throw new Error(`GLB chunk at byte ${off} runs past the end`);
    if (type === 0x4e4f534a) json = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, off + 8, len)));
    else if (type === 0x004e4942) bin = new Uint8Array(buf, off + 8, len);
    off += 8 + ((len + 3) & ~3);
  }
  if (!json) throw new Error("GLB has no JSON chunk");
  return { json, bin };
}

// Accessor `index` as a typed array of count × components numbers
// (normalized integers mapped to [0, 1] or [-1, 1] when asFloat).
function readAccessor(g, index, asFloat) {
  const a = g.json.accessors?.[index];
  if (!a) throw new Error(`/accessors/${index} does not exist`);
  const n = COMPONENTS[a.type], t = TYPES[a.componentType];
  if (!n || !t) throw new Error(`/accessors/${index}: unsupported type`);
  const [Arr, size, max] = t;
  const out = asFloat ? new Float32Array(a.count * n) : new Arr(a.count * n);
  if (a.bufferView === undefined) return out;
  const bv = g.json.bufferViews?.[a.bufferView];
  if (!bv || !g.bin || (bv.buffer ?? 0) !== 0) throw new Error(`/accessors/${index}/bufferView is not in the GLB's binary chunk`);
  const stride = bv.byteStride || n * size;
  const base = (bv.byteOffset || 0) + (a.byteOffset || 0);
  const end = base + stride * Math.max(a.count - 1, 0) + n * size;
  if (end > (bv.byteOffset || 0) + bv.byteLength || end > g.bin.byteLength)
    throw new Error(`/accessors/${index}/count runs past its bufferView`);
  const dv = new DataView(g.bin.buffer, g.bin.byteOffset, g.bin.byteLength);
  const get = { 5120: "getInt8", 5121: "getUint8", 5122: "getInt16", 5123: "getUint16", 5125: "getUint32", 5126: "getFloat32" }[a.componentType];
  for (let i = 0; i < a.count; i++)
    for (let c = 0; c < n; c++) {
      let v = dv[get](base + i * stride + c * size, true);
      if (asFloat && a.normalized && max) v = Math.max(v / max, -1);
      out[i * n + c] = v;
    }
  return out;
}

function nodeLocal(n) {
  if (n.matrix) return n.matrix.slice();
  return compose(n.scale || [1, 1, 1], n.rotation || [0, 0, 0, 1], n.translation || [0, 0, 0]);
}

// The world matrix Babylon.js gives the skinned mesh: its loader ignores the
// mesh node's own TRS and parents the mesh to the skeleton root's parent
// (the skeleton root being skin.skeleton, or the joints' nearest common
// ancestor); a skinned node on that chain contributes no TRS either.
function meshWorld(json, meshNode, skin) {
  const nodes = json.nodes || [], parent = new Array(nodes.length).fill(-1);
  nodes.forEach((n, i) => (n.children || []).forEach((c) => (parent[c] = i)));
  const chain = (i) => { const p = []; for (; i >= 0; i = parent[i]) p.unshift(i); return p; };
  let root = -1;
  const paths = skin.joints.map(chain);
  for (let d = 0; paths.every((p) => d < p.length && p[d] === paths[0][d]); d++) root = paths[0][d];
  if (skin.skeleton !== undefined && (skin.skeleton === root || chain(root).includes(skin.skeleton))) root = skin.skeleton;
  let p = root >= 0 ? parent[root] : -1;
  if (p === meshNode) p = parent[meshNode];
  let world = identity();
  const above = [];
  for (; p >= 0; p = parent[p]) if (nodes[p].skin === undefined) { world = mul(world, nodeLocal(nodes[p])); above.push(nodes[p]); }
  return { world, apiMesh: apiMesh(above) };
}

// The same chain as the API's "mesh" (a TransformNode and its parents:
// Compose(scaling, rotationQuaternion, position) × parent world), so the
// world space of the ops and of "world"/"positions" is the one the page
// draws in. null when the chain is empty (identity: no tNode).
function apiMesh(chain) {
  let node = null;
  for (let i = chain.length - 1; i >= 0; i--) {
    const n = chain[i];
    const trs = n.matrix ? decompose(n.matrix)
      : { scaling: n.scale || [1, 1, 1], rotationQuaternion: n.rotation || [0, 0, 0, 1], position: n.translation || [0, 0, 0] };
    node = node ? { ...trs, parent: node } : trs;
  }
  return node;
}

// Area-weighted vertex normals for a primitive that has none (Fox has none);
// shading only, the silhouette does not depend on them.
function smoothNormals(pos, idx) {
  const n = new Float32Array(pos.length);
  for (let t = 0; t + 2 < idx.length; t += 3) {
    const [a, b, c] = [idx[t] * 3, idx[t + 1] * 3, idx[t + 2] * 3];
    const u = [pos[b] - pos[a], pos[b + 1] - pos[a + 1], pos[b + 2] - pos[a + 2]];
    const v = [pos[c] - pos[a], pos[c + 1] - pos[a + 1], pos[c + 2] - pos[a + 2]];
    const f = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    for (const k of [a, b, c]) for (let i = 0; i < 3; i++) n[k + i] += f[i];
  }
  return n;
}

// The skinned mesh of the skin the daemon uses by default (skin 0, as a PUT
// without ?skin= stores): every node with a mesh and that skin (RobotExpressive
// has several) drawn with the one world matrix Babylon gives them.
// { world, apiMesh (world as the API's "mesh"), primitives: [{position, normal, joints, weights, indices, pointer ("/meshes/M/primitives/P")}], jointCount, bounds }
export function loadSkinnedMesh(buf, skinIndex = 0) {
  const g = parseGlb(buf);
  const json = g.json;
  const nodes = json.nodes || [];
  const meshNodes = nodes.map((n, i) => i).filter((i) => nodes[i].mesh !== undefined && nodes[i].skin === skinIndex);
  if (!meshNodes.length) throw new Error(`the GLB has no skinned mesh for skin ${skinIndex} (a node with a mesh and "skin": ${skinIndex})`);
  const skin = json.skins?.[skinIndex];
  if (!skin) throw new Error(`/skins/${skinIndex} does not exist`);
  const primitives = [];
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (const nodeIndex of meshNodes) {
    const node = nodes[nodeIndex];
    const mesh = json.meshes?.[node.mesh];
    if (!mesh) throw new Error(`/nodes/${nodeIndex}/mesh does not exist`);
    mesh.primitives.forEach((p, k) => {
      const at = p.attributes || {};
      if (at.POSITION === undefined || at.JOINTS_0 === undefined || at.WEIGHTS_0 === undefined) return;
      if ((p.mode ?? 4) !== 4) return; // triangles only
      const position = readAccessor(g, at.POSITION, true);
      const count = position.length / 3;
      const normal = at.NORMAL !== undefined ? readAccessor(g, at.NORMAL, true) : null;
      const joints = Uint16Array.from(readAccessor(g, at.JOINTS_0, false));
      const weights = readAccessor(g, at.WEIGHTS_0, true);
      if (joints.length !== count * 4 || weights.length !== count * 4 || (normal && normal.length !== count * 3))
        throw new Error(`/meshes/${node.mesh}/primitives/${k}: attribute counts differ`);
      for (const j of joints) if (j >= skin.joints.length) throw new Error(`/meshes/${node.mesh}/primitives/${k}/attributes/JOINTS_0: joint ${j} is not in the skin`);
      const indices = p.indices !== undefined ? Uint32Array.from(readAccessor(g, p.indices, false)) : Uint32Array.from({ length: count }, (_, i) => i);
      for (const i of indices) if (i >= count) throw new Error(`/meshes/${node.mesh}/primitives/${k}/indices: index ${i} >= ${count}`);
      for (let i = 0; i < count; i++)
        for (let c = 0; c < 3; c++) { lo[c] = Math.min(lo[c], position[3 * i + c]); hi[c] = Math.max(hi[c], position[3 * i + c]); }
      primitives.push({ position, normal: normal || smoothNormals(position, indices), joints, weights, indices, pointer: `/meshes/${node.mesh}/primitives/${k}` });
    });
  }
  if (!primitives.length) throw new Error(`skin ${skinIndex}'s meshes have no triangle primitive with POSITION, JOINTS_0 and WEIGHTS_0`);
  const { world, apiMesh: node } = meshWorld(json, meshNodes[0], skin);
  return { world, apiMesh: node, primitives, jointCount: skin.joints.length, bounds: [lo, hi] };
}
