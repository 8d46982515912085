// 4×4 matrices as 16 numbers in glTF/Babylon order (column-major for a
// column-vector reader, row-major for Babylon's row vectors: translation in
// 12..14). mul(a, b) is Babylon's a.multiply(b): apply a, then b
// (world = local × parentWorld).

export function identity() {
  return [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
}

export function mul(a, b) {
  const o = new Array(16);
  for (let r = 0; r < 4; r++)
    for (let c = 0; c < 4; c++)
      o[4 * r + c] = a[4 * r] * b[c] + a[4 * r + 1] * b[4 + c] + a[4 * r + 2] * b[8 + c] + a[4 * r + 3] * b[12 + c];
  return o;
}

export function invert(m) {
  const a = m, o = new Array(16);
  const b00 = a[0] * a[5] - a[1] * a[4], b01 = a[0] * a[6] - a[2] * a[4], b02 = a[0] * a[7] - a[3] * a[4];
  const b03 = a[1] * a[6] - a[2] * a[5], b04 = a[1] * a[7] - a[3] * a[5], b05 = a[2] * a[7] - a[3] * a[6];
  const b06 = a[8] * a[13] - a[9] * a[12], b07 = a[8] * a[14] - a[10] * a[12], b08 = a[8] * a[15] - a[11] * a[12];
  const b09 = a[9] * a[14] - a[10] * a[13], b10 = a[9] * a[15] - a[11] * a[13], b11 = a[10] * a[15] - a[11] * a[14];
  const det = b00 * b11 - b01 * b10 + b02 * b09 + b03 * b08 - b04 * b07 + b05 * b06;
  if (!det) return identity();
  const d = 1 / det;
  o[0] = (a[5] * b11 - a[6] * b10 + a[7] * b09) * d;
  o[1] = (a[2] * b10 - a[1] * b11 - a[3] * b09) * d;
  o[2] = (a[13] * b05 - a[14] * b04 + a[15] * b03) * d;
  o[3] = (a[10] * b04 - a[9] * b05 - a[11] * b03) * d;
  o[4] = (a[6] * b08 - a[4] * b11 - a[7] * b07) * d;
  o[5] = (a[0] * b11 - a[2] * b08 + a[3] * b07) * d;
  o[6] = (a[14] * b02 - a[12] * b05 - a[15] * b01) * d;
  o[7] = (a[8] * b05 - a[10] * b02 + a[11] * b01) * d;
  o[8] = (a[4] * b10 - a[5] * b08 + a[7] * b06) * d;
  o[9] = (a[1] * b08 - a[0] * b10 - a[3] * b06) * d;
  o[10] = (a[12] * b04 - a[13] * b02 + a[15] * b00) * d;
  o[11] = (a[9] * b02 - a[8] * b04 - a[11] * b00) * d;
  o[12] = (a[5] * b07 - a[4] * b09 - a[6] * b06) * d;
  o[13] = (a[0] * b09 - a[1] * b07 + a[2] * b06) * d;
  o[14] = (a[13] * b01 - a[12] * b03 - a[14] * b00) * d;
  o[15] = (a[8] * b03 - a[9] * b01 + a[10] * b00) * d;
  return o;
}

// glTF node TRS → matrix (Babylon's Matrix.Compose(scale, rotation, translation)).
export function compose(s, q, t) {
  const [x, y, z, w] = q;
  const xx = x * x, yy = y * y, zz = z * z, xy = x * y, zw = z * w, zx = z * x, yw = y * w, yz = y * z, xw = x * w;
  return [
    (1 - 2 * (yy + zz)) * s[0], 2 * (xy + zw) * s[0], 2 * (zx - yw) * s[0], 0,
    2 * (xy - zw) * s[1], (1 - 2 * (zz + xx)) * s[1], 2 * (yz + xw) * s[1], 0,
    2 * (zx + yw) * s[2], 2 * (yz - xw) * s[2], (1 - 2 * (yy + xx)) * s[2], 0,
    t[0], t[1], t[2], 1,
  ];
}

// The rotation quaternion [x, y, z, w] of a TRS matrix (scale divided out).
export function rotationOf(m) {
  const sx = Math.hypot(m[0], m[1], m[2]) || 1, sy = Math.hypot(m[4], m[5], m[6]) || 1;
  const sz = Math.hypot(m[8], m[9], m[10]) || 1;
  const det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) + m[2] * (m[4] * m[9] - m[5] * m[8]);
  const sgn = det < 0 ? -1 : 1;
  const r = [m[0] / sx * sgn, m[1] / sx * sgn, m[2] / sx * sgn, m[4] / sy, m[5] / sy, m[6] / sy, m[8] / sz, m[9] / sz, m[10] / sz];
  // r is row-major of Babylon's rotation block: r[3*i+j] = R[i][j].
  const m11 = r[0], m12 = r[1], m13 = r[2], m21 = r[3], m22 = r[4], m23 = r[5], m31 = r[6], m32 = r[7], m33 = r[8];
  const tr = m11 + m22 + m33;
  let x, y, z, w;
  if (tr > 0) {
    const s = 0.5 / Math.sqrt(tr + 1);
    w = 0.25 / s; x = (m23 - m32) * s; y = (m31 - m13) * s; z = (m12 - m21) * s;
  } else if (m11 > m22 && m11 > m33) {
    const s = 2 * Math.sqrt(1 + m11 - m22 - m33);
    w = (m23 - m32) / s; x = 0.25 * s; y = (m21 + m12) / s; z = (m31 + m13) / s;
  } else if (m22 > m33) {
    const s = 2 * Math.sqrt(1 + m22 - m11 - m33);
    w = (m31 - m13) / s; x = (m21 + m12) / s; y = 0.25 * s; z = (m32 + m23) / s;
  } else {
    const s = 2 * Math.sqrt(1 + m33 - m11 - m22);
    w = (m12 - m21) / s; x = (m31 + m13) / s; y = (m32 + m23) / s; z = 0.25 * s;
  }
  return [x, y, z, w];
}

// A TRS matrix as the API's mesh node {scaling, rotationQuaternion,
// position}: compose() of the result gives m back (a negative determinant
// goes to the x scale, as rotationOf() takes it out of the first row).
export function decompose(m) {
  const det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) + m[2] * (m[4] * m[9] - m[5] * m[8]);
  const sx = Math.hypot(m[0], m[1], m[2]) * (det < 0 ? -1 : 1);
  return { scaling: [sx, Math.hypot(m[4], m[5], m[6]), Math.hypot(m[8], m[9], m[10])], rotationQuaternion: rotationOf(m), position: [m[12], m[13], m[14]] };
}

// Where the ray from `origin` along `dir` meets the plane through `p` with
// normal `n`; null when it runs parallel to it or the plane is behind.
export function rayPlane(origin, dir, p, n) {
  const d = dir[0] * n[0] + dir[1] * n[1] + dir[2] * n[2];
  if (Math.abs(d) < 1e-12) return null;
  const t = ((p[0] - origin[0]) * n[0] + (p[1] - origin[1]) * n[1] + (p[2] - origin[2]) * n[2]) / d;
  return t > 0 ? [origin[0] + t * dir[0], origin[1] + t * dir[1], origin[2] + t * dir[2]] : null;
}

// Hamilton product a ⊗ b (Babylon's a.multiply(b)).
export function qmul(a, b) {
  return [
    a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
    a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
    a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
    a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
  ];
}

export function qaxis(axis, angle) {
  const s = Math.sin(angle / 2);
  return [axis[0] * s, axis[1] * s, axis[2] * s, Math.cos(angle / 2)];
}

export function transformPoint(m, p) {
  return [
    p[0] * m[0] + p[1] * m[4] + p[2] * m[8] + m[12],
    p[0] * m[1] + p[1] * m[5] + p[2] * m[9] + m[13],
    p[0] * m[2] + p[1] * m[6] + p[2] * m[10] + m[14],
  ];
}

export function perspective(fovY, aspect, near, far) {
  const f = 1 / Math.tan(fovY / 2), nf = 1 / (near - far);
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
}

export function lookAt(eye, target, up) {
  let zx = eye[0] - target[0], zy = eye[1] - target[1], zz = eye[2] - target[2];
  let l = Math.hypot(zx, zy, zz) || 1;
  zx /= l; zy /= l; zz /= l;
  let xx = up[1] * zz - up[2] * zy, xy = up[2] * zx - up[0] * zz, xz = up[0] * zy - up[1] * zx;
  l = Math.hypot(xx, xy, xz) || 1;
  xx /= l; xy /= l; xz /= l;
  const yx = zy * xz - zz * xy, yy = zz * xx - zx * xz, yz = zx * xy - zy * xx;
  return [xx, yx, zx, 0, xy, yy, zy, 0, xz, yz, zz, 0,
    -(xx * eye[0] + xy * eye[1] + xz * eye[2]), -(yx * eye[0] + yy * eye[1] + yz * eye[2]),
    -(zx * eye[0] + zy * eye[1] + zz * eye[2]), 1];
}

export function fmt(m, digits = 4) {
  const rows = [];
  for (let r = 0; r < 4; r++) rows.push(m.slice(4 * r, 4 * r + 4).map((v) => v.toFixed(digits).padStart(digits + 4)).join(" "));
  return rows.join("\n");
}

// Babylon's Quaternion.RotationYawPitchRoll(yaw, pitch, roll): an API mesh
// node's Euler "rotation" [x, y, z] is (pitch, yaw, roll).
export function yawPitchRoll(yaw, pitch, roll) {
  const [sr, cr] = [Math.sin(roll / 2), Math.cos(roll / 2)];
  const [sp, cp] = [Math.sin(pitch / 2), Math.cos(pitch / 2)];
  const [sy, cy] = [Math.sin(yaw / 2), Math.cos(yaw / 2)];
  return [cy * sp * cr + sy * cp * sr, sy * cp * cr - cy * sp * sr, cy * cp * sr - sy * sp * cr, cy * cp * cr + sy * sp * sr];
}

// The world matrix of an API "mesh" node chain (docs/bone-api.md): as
// TransformNode.computeWorldMatrix, Compose(scaling, rotation, position) ×
// parent world; the quaternion wins over an Euler rotation. null: identity.
export function meshWorld(node) {
  let w = identity();
  for (let n = node, depth = 0; n && depth < 64; n = n.parent, depth++) {
    const r = n.rotationQuaternion || (n.rotation ? yawPitchRoll(n.rotation[1], n.rotation[0], n.rotation[2]) : [0, 0, 0, 1]);
    w = mul(w, compose(n.scaling || [1, 1, 1], r, n.position || [0, 0, 0]));
  }
  return w;
}

// The chain's top node when it is Babylon's glTF "__root__" (rotation
// (0,1,0,0), scaling (1,1,-1): right- to left-handed, a mirror in x), whose
// inverse the page puts in its view so the picture is not mirrored; else
// the identity. The world the page computes in stays the API's.
export function handedness(node) {
  let top = node;
  while (top && top.parent) top = top.parent;
  const eq = (a, b) => a && a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) < 1e-9);
  if (top && top !== node && eq(top.rotationQuaternion, [0, 1, 0, 0]) && eq(top.scaling || [1, 1, 1], [1, 1, -1]) && eq(top.position || [0, 0, 0], [0, 0, 0]))
    return invert(compose([1, 1, -1], [0, 1, 0, 0], [0, 0, 0]));
  return identity();
}
