#include "sk_bone.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sk_fdlibm.h"
#include "sk_mat.h"

/* ---- Babylon math helpers not in sk_mat (math.vector.pure.js) ------------ */

/* Matrix.FromValuesToRef for ScalingToRef. */
static void mat_scaling(double x, double y, double z, float m[16]) {
  memset(m, 0, 16 * sizeof *m);
  m[0] = (float)x;
  m[5] = (float)y;
  m[10] = (float)z;
  m[15] = 1;
}

/* Matrix.FromQuaternionToRef (also Quaternion.toRotationMatrix). */
void sk_bone_quat_to_matrix(const double q[4], float m[16]) {
  double xx = q[0] * q[0], yy = q[1] * q[1], zz = q[2] * q[2];
  double xy = q[0] * q[1], zw = q[2] * q[3], zx = q[2] * q[0];
  double yw = q[1] * q[3], yz = q[1] * q[2], xw = q[0] * q[3];
  m[0] = (float)(1.0 - 2.0 * (yy + zz));
  m[1] = (float)(2.0 * (xy + zw));
  m[2] = (float)(2.0 * (zx - yw));
  m[3] = 0;
  m[4] = (float)(2.0 * (xy - zw));
  m[5] = (float)(1.0 - 2.0 * (zz + xx));
  m[6] = (float)(2.0 * (yz + xw));
  m[7] = 0;
  m[8] = (float)(2.0 * (zx + yw));
  m[9] = (float)(2.0 * (yz - xw));
  m[10] = (float)(1.0 - 2.0 * (yy + xx));
  m[11] = 0;
  m[12] = m[13] = m[14] = 0;
  m[15] = 1;
}

static double vec3_length(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* Vector3.normalizeToRef / normalize: unchanged at length 0 or exactly 1. */
void sk_bone_normalize(const double v[3], double dest[3]) {
  double len = vec3_length(v);
  if (len == 0 || len == 1.0) {
    memmove(dest, v, 3 * sizeof *dest);
    return;
  }
  double k = 1.0 / len;
  for (int i = 0; i < 3; i++)
    dest[i] = v[i] * k;
}

/* Matrix.RotationAxisToRef (normalises the axis; note the -angle). */
void sk_bone_rotation_axis(const double axis_in[3], double angle, float m[16]) {
  double s = sk_fdlibm_sin(-angle), c = sk_fdlibm_cos(-angle), c1 = 1 - c;
  double a[3];
  sk_bone_normalize(axis_in, a);
  double x = a[0], y = a[1], z = a[2];
  m[0] = (float)(x * x * c1 + c);
  m[1] = (float)(x * y * c1 - z * s);
  m[2] = (float)(x * z * c1 + y * s);
  m[3] = 0;
  m[4] = (float)(y * x * c1 + z * s);
  m[5] = (float)(y * y * c1 + c);
  m[6] = (float)(y * z * c1 - x * s);
  m[7] = 0;
  m[8] = (float)(z * x * c1 - y * s);
  m[9] = (float)(z * y * c1 + x * s);
  m[10] = (float)(z * z * c1 + c);
  m[11] = 0;
  m[12] = m[13] = m[14] = 0;
  m[15] = 1;
}

/* Quaternion.RotationAxisToRef (divides by the axis length, no normalise). */
void sk_bone_quat_rotation_axis(const double axis[3], double angle, double q[4]) {
  q[3] = sk_fdlibm_cos(angle / 2);
  double k = sk_fdlibm_sin(angle / 2) / vec3_length(axis);
  q[0] = axis[0] * k;
  q[1] = axis[1] * k;
  q[2] = axis[2] * k;
}

/* Vector3.TransformCoordinatesFromFloatsToRef. */
void sk_bone_transform_coords(const double v[3], const float m[16], double dest[3]) {
  double x = v[0], y = v[1], z = v[2];
  double rx = x * m[0] + y * m[4] + z * m[8] + m[12];
  double ry = x * m[1] + y * m[5] + z * m[9] + m[13];
  double rz = x * m[2] + y * m[6] + z * m[10] + m[14];
  double rw = 1 / (x * m[3] + y * m[7] + z * m[11] + m[15]);
  dest[0] = rx * rw;
  dest[1] = ry * rw;
  dest[2] = rz * rw;
}

/* Vector3.TransformNormalFromFloatsToRef. */
void sk_bone_transform_normal(const double v[3], const float m[16], double dest[3]) {
  double x = v[0], y = v[1], z = v[2];
  dest[0] = x * m[0] + y * m[4] + z * m[8];
  dest[1] = x * m[1] + y * m[5] + z * m[9];
  dest[2] = x * m[2] + y * m[6] + z * m[10];
}

/* Quaternion.toEulerAnglesToRef (Math.atan2/asin as V8 rounds them). */
static void quat_to_euler(const double q[4], double r[3]) {
  double qx = q[0], qy = q[1], qz = q[2], qw = q[3];
  double z_axis_y = qy * qz - qx * qw;
  const double limit = 0.4999999;
  if (z_axis_y < -limit) {
    r[1] = 2 * sk_fdlibm_atan2(qy, qw);
    r[0] = M_PI / 2;
    r[2] = 0;
  } else if (z_axis_y > limit) {
    r[1] = 2 * sk_fdlibm_atan2(qy, qw);
    r[0] = -M_PI / 2;
    r[2] = 0;
  } else {
    double sqw = qw * qw, sqz = qz * qz, sqx = qx * qx, sqy = qy * qy;
    r[2] = sk_fdlibm_atan2(2.0 * (qx * qy + qz * qw), -sqz - sqx + sqy + sqw);
    r[0] = sk_fdlibm_asin(-2.0 * z_axis_y);
    r[1] = sk_fdlibm_atan2(2.0 * (qz * qx + qy * qw), sqz - sqx - sqy + sqw);
  }
}

/* Matrix.getRotationMatrixToRef: decompose(scale) then divide the rows;
 * the identity when a scale is zero. */
static void rotation_matrix_of(const float m[16], float dest[16]) {
  double sx = sqrt((double)m[0] * m[0] + (double)m[1] * m[1] + (double)m[2] * m[2]);
  double sy = sqrt((double)m[4] * m[4] + (double)m[5] * m[5] + (double)m[6] * m[6]);
  double sz = sqrt((double)m[8] * m[8] + (double)m[9] * m[9] + (double)m[10] * m[10]);
  if (sk_mat_det(m) <= 0)
    sy *= -1;
  if (sx == 0 || sy == 0 || sz == 0) {
    sk_mat_identity(dest);
    return;
  }
  double ix = 1 / sx, iy = 1 / sy, iz = 1 / sz;
  float r[16] = {(float)(m[0] * ix), (float)(m[1] * ix), (float)(m[2] * ix), 0,
                 (float)(m[4] * iy), (float)(m[5] * iy), (float)(m[6] * iy), 0,
                 (float)(m[8] * iz), (float)(m[9] * iz), (float)(m[10] * iz), 0,
                 0, 0, 0, 1};
  memcpy(dest, r, sizeof r);
}

/* ---- mesh ------------------------------------------------------------------ */

int sk_mesh_compose(const sk_mesh_node *nodes, size_t n, sk_mesh *mesh) {
  float world[16], local[16];
  /* computeWorldMatrix: local · parent's world, the parent's first. */
  sk_mat_compose(nodes[n - 1].scaling, nodes[n - 1].rotation, nodes[n - 1].position, world);
  for (size_t k = n - 1; k-- > 0;) {
    sk_mat_compose(nodes[k].scaling, nodes[k].rotation, nodes[k].position, local);
    sk_mat_mul(local, world, world);
  }
  for (int i = 0; i < 16; i++)
    if (!isfinite(world[i]))
      return SK_ESINGULAR;
  if (sk_mat_det(world) == 0)
    return SK_ESINGULAR;
  memcpy(mesh->world, world, sizeof world);
  memcpy(mesh->scaling, nodes[0].scaling, sizeof mesh->scaling);
  return 0;
}

/* ---- lazy absolute matrices -------------------------------------------------- */

int sk_bones_init(sk_bones *b, sk_skeleton *s) {
  b->s = s;
  b->absolute = calloc(s->count ? 16 * s->count : 16, sizeof *b->absolute);
  b->rest_is_local = calloc(s->count ? s->count : 1, 1);
  b->seen_local = malloc((s->count ? 16 * s->count : 16) * sizeof *b->seen_local);
  b->seen_parent = malloc((s->count ? s->count : 1) * sizeof *b->seen_parent);
  b->seen_valid = false;
  b->solving = false;
  b->dirty_from = 0;
  if (b->absolute == NULL || b->rest_is_local == NULL || b->seen_local == NULL || b->seen_parent == NULL) {
    sk_bones_close(b);
    return SK_ENOMEM;
  }
  return 0;
}

void sk_bones_reset(sk_bones *b) {
  const size_t n = b->s->count;
  memset(b->absolute, 0, (n ? 16 * n : 16) * sizeof *b->absolute);
  memset(b->rest_is_local, 0, n ? n : 1);
  b->seen_valid = false;
  b->solving = false;
  b->dirty_from = 0;
}

void sk_bones_close(sk_bones *b) {
  free(b->absolute);
  free(b->rest_is_local);
  free(b->seen_local);
  free(b->seen_parent);
  b->absolute = NULL;
  b->rest_is_local = NULL;
  b->seen_local = NULL;
  b->seen_parent = NULL;
  b->seen_valid = false;
  b->s = NULL;
}

/* Bone.computeAbsoluteMatrices on `root` (no pose matrix: no mesh is
 * registered with the skeleton), for the bones of its subtree from index
 * `from` on (the earlier ones, with their ancestors, unchanged since they
 * were computed): bones are parent-first, so a bone is in the subtree when
 * it is the root or its parent is. */
static void refresh_subtree(sk_bones *b, int32_t root, size_t from) {
  const sk_skeleton *s = b->s;
  size_t n = s->count;
  for (size_t i = from > (size_t)root ? from : (size_t)root; i < n; i++) {
    const sk_bone *bone = &s->bones[i];
    float *abs = b->absolute + 16 * i;
    if ((int32_t)i == root) {
      if (bone->parent >= 0)
        sk_mat_mul(bone->local.matrix, b->absolute + 16 * (size_t)bone->parent, abs);
      else
        memcpy(abs, bone->local.matrix, 16 * sizeof *abs);
      continue;
    }
    /* A bone is in the subtree when its nearest ancestor at or after root
     * is root: parents come first, so checking the chain is enough. */
    int32_t p = bone->parent;
    while (p > root)
      p = s->bones[p].parent;
    if (p == root)
      sk_mat_mul(bone->local.matrix, b->absolute + 16 * (size_t)bone->parent, abs);
  }
}

/* The first bone whose local or parent differs from what the absolute
 * matrices were last computed from (count when none does, 0 when they were
 * never computed). Bones are parent-first: every bone before it, and so
 * every ancestor of one, is as it was. */
static size_t seen_first_change(const sk_bones *b) {
  const sk_skeleton *s = b->s;
  if (!b->seen_valid)
    return 0;
  for (size_t i = 0; i < s->count; i++)
    if (s->bones[i].parent != b->seen_parent[i] ||
        memcmp(s->bones[i].local.matrix, b->seen_local + 16 * i, 16 * sizeof *b->seen_local) != 0)
      return i;
  return s->count;
}

/* Bones [from, count) are what the absolute matrices now hold. */
static void seen_remember(sk_bones *b, size_t from) {
  const sk_skeleton *s = b->s;
  for (size_t i = from; i < s->count; i++) {
    b->seen_parent[i] = s->bones[i].parent;
    memcpy(b->seen_local + 16 * i, s->bones[i].local.matrix, 16 * sizeof *b->seen_local);
  }
  b->seen_valid = true;
  b->dirty_from = s->count;
}

void sk_bones_solve_begin(sk_bones *b) {
  b->dirty_from = b->s->count > 0 ? seen_first_change(b) : 0;
  b->solving = true;
}

void sk_bones_solve_end(sk_bones *b) { b->solving = false; }

void sk_bones_refresh_all(sk_bones *b) {
  const sk_skeleton *s = b->s;
  for (size_t i = 0; i < s->count; i++) {
    const sk_bone *bone = &s->bones[i];
    float *abs = b->absolute + 16 * i;
    if (bone->parent >= 0)
      sk_mat_mul(bone->local.matrix, b->absolute + 16 * (size_t)bone->parent, abs);
    else
      memcpy(abs, bone->local.matrix, 16 * sizeof *abs);
  }
  /* bones[0]'s subtree now holds what refresh_subtree would compute */
  seen_remember(b, 0);
}

const float *sk_bones_absolute(sk_bones *b, int32_t bone) {
  const size_t from = b->solving ? b->dirty_from : b->s->count > 0 ? seen_first_change(b) : 0;
  if (from < b->s->count) {
    /* bones before `from` would get the values they hold */
    refresh_subtree(b, 0, from);
    seen_remember(b, from);
  }
  return b->absolute + 16 * (size_t)bone;
}

double sk_bones_scaling_det(const sk_bones *b, int32_t bone) {
  return sk_mat_det(b->s->bones[bone].abs_bind) < 0 ? -1 : 1;
}

void sk_bones_world(sk_bones *b, const sk_mesh *mesh, float *world, float *positions) {
  sk_bones_refresh_all(b);
  for (size_t i = 0; i < b->s->count; i++) {
    float w[16];
    if (mesh != NULL)
      sk_mat_mul(b->absolute + 16 * i, mesh->world, w);
    else
      memcpy(w, b->absolute + 16 * i, sizeof w);
    if (world != NULL)
      memcpy(world + 16 * i, w, sizeof w);
    if (positions != NULL)
      memcpy(positions + 3 * i, w + 12, 3 * sizeof *positions);
  }
}

/* ---- local matrix access ------------------------------------------------------ */

/* The bone's local is about to change (sk_bones.dirty_from). */
static void dirty(sk_bones *b, size_t bone) {
  if (bone < b->dirty_from)
    b->dirty_from = bone;
}

/* Every setter goes through here: the local is about to change. */
static sk_local *local_of(sk_bones *b, int32_t bone) {
  b->rest_is_local[bone] = 0;
  dirty(b, (size_t)bone);
  return &b->s->bones[bone].local;
}

/* Read-backs never change the local (Babylon's getLocalMatrix composes only
 * what a setter left pending, and here setters compose at once). */
static sk_local *peek_local(sk_bones *b, int32_t bone) { return &b->s->bones[bone].local; }

void sk_bones_touch(sk_bones *b, int32_t bone) {
  b->rest_is_local[bone] = 0;
  dirty(b, (size_t)bone);
}

void sk_bones_return_to_rest(sk_bones *b, int32_t bone) {
  sk_skeleton *s = b->s;
  for (size_t i = bone >= 0 ? (size_t)bone : 0; i < s->count; i++) {
    if (bone < 0 && s->bones[i].index == -1)
      continue;
    if (!b->rest_is_local[i]) {
      dirty(b, i);
      sk_skeleton_bone_return_to_rest(s, (int32_t)i);
    }
    if (bone >= 0)
      break;
  }
}

/* Bone._decompose(). */
static void decompose(sk_local *l) {
  if (!l->need_decompose)
    return;
  l->need_decompose = false;
  sk_mat_decompose(l->matrix, l->scaling, l->rotation, l->position);
}

/* tmat = bone's absolute, times the mesh's world when there is one. */
static void absolute_in(sk_bones *b, int32_t bone, const sk_mesh *mesh, float dest[16]) {
  const float *abs = sk_bones_absolute(b, bone);
  if (mesh != NULL)
    sk_mat_mul(abs, mesh->world, dest);
  else
    memcpy(dest, abs, 16 * sizeof *dest);
}

/* ---- setters ------------------------------------------------------------------ */

/* Bone._updatePosition. World space ignores the mesh on a root bone. */
static void update_position(sk_bones *b, int32_t bone, const double vec[3], sk_space space, const sk_mesh *mesh,
                            bool translation_mode) {
  sk_local *l = local_of(b, bone);
  float *lm = l->matrix;
  double v[3] = {vec[0], vec[1], vec[2]};
  if (space == SK_SPACE_WORLD) {
    float tmat[16];
    int32_t parent = b->s->bones[bone].parent;
    if (parent >= 0)
      absolute_in(b, parent, mesh, tmat);
    else
      sk_mat_identity(tmat);
    if (translation_mode)
      tmat[12] = tmat[13] = tmat[14] = 0;
    sk_mat_invert(tmat, tmat);
    sk_bone_transform_coords(vec, tmat, v);
  }
  for (int i = 0; i < 3; i++)
    lm[12 + i] = translation_mode ? (float)((double)lm[12 + i] + v[i]) : (float)v[i];
  l->need_decompose = true;
}

void sk_bone_translate(sk_bones *b, int32_t bone, const double v[3], sk_space space, const sk_mesh *mesh) {
  update_position(b, bone, v, space, mesh, true);
}

void sk_bone_set_position(sk_bones *b, int32_t bone, const double p[3], sk_space space, const sk_mesh *mesh) {
  update_position(b, bone, p, space, mesh, false);
}

static void scale_one(sk_bones *b, int32_t bone, const double s[3]) {
  sk_skeleton *sk = b->s;
  float *lm = local_of(b, bone)->matrix;
  float sm[16];
  mat_scaling(s[0], s[1], s[2], sm);
  sk_mat_mul(sm, lm, lm);
  sk_mat_invert(sm, sm);
  /* Children are the later bones naming this one as parent, in creation
   * order (Babylon's bone.children). */
  for (size_t c = (size_t)bone + 1; c < sk->count; c++) {
    if (sk->bones[c].parent != bone)
      continue;
    float *cm = local_of(b, (int32_t)c)->matrix;
    sk_mat_mul(cm, sm, cm);
    for (int i = 0; i < 3; i++)
      cm[12 + i] = (float)((double)cm[12 + i] * s[i]);
    sk->bones[c].local.need_decompose = true;
  }
  sk->bones[bone].local.need_decompose = true;
}

void sk_bone_scale(sk_bones *b, int32_t bone, const double s[3], bool scale_children) {
  scale_one(b, bone, s);
  if (!scale_children)
    return;
  for (size_t c = (size_t)bone + 1; c < b->s->count; c++)
    if (b->s->bones[c].parent == bone)
      sk_bone_scale(b, (int32_t)c, s, true);
}

void sk_bone_set_scale(sk_bones *b, int32_t bone, const double s[3]) {
  sk_local_set_scaling(local_of(b, bone), s);
}

/* Bone._rotateWithMatrix. */
static void rotate_with_matrix(sk_bones *b, int32_t bone, const float rmat[16], sk_space space,
                               const sk_mesh *mesh) {
  float *lm = local_of(b, bone)->matrix;
  float lx = lm[12], ly = lm[13], lz = lm[14];
  int32_t parent = b->s->bones[bone].parent;
  float ps[16], psi[16];
  bool framed = space == SK_SPACE_WORLD && (parent >= 0 || mesh != NULL);
  if (framed) {
    if (parent >= 0)
      absolute_in(b, parent, mesh, ps);
    else
      memcpy(ps, mesh->world, sizeof ps);
    sk_mat_invert(ps, psi);
    sk_mat_mul(lm, ps, lm);
    sk_mat_mul(lm, rmat, lm);
    sk_mat_mul(lm, psi, lm);
  } else {
    sk_mat_mul(lm, rmat, lm);
  }
  lm[12] = lx;
  lm[13] = ly;
  lm[14] = lz;
  local_of(b, bone)->need_decompose = true;
}

/* Bone._getAbsoluteInverseMatrixUnscaledToRef: false when the inverse is
 * not a number (Babylon then leaves the bone alone). */
static bool absolute_inverse_unscaled(sk_bones *b, int32_t bone, const sk_mesh *mesh, float inv[16]) {
  float sm[16];
  absolute_in(b, bone, mesh, inv);
  if (mesh != NULL)
    mat_scaling(mesh->scaling[0], mesh->scaling[1], mesh->scaling[2], sm);
  else
    sk_mat_identity(sm);
  sk_mat_invert(inv, inv);
  if (isnan(inv[0]))
    return false;
  sm[0] = (float)((double)sm[0] * sk_bones_scaling_det(b, bone));
  sk_mat_mul(inv, sm, inv);
  return true;
}

/* The world-space tail of setYawPitchRoll/setAxisAngle/setRotation*:
 * rotates by inverse-unscaled · rot. */
static void rotate_world_to(sk_bones *b, int32_t bone, const float rot[16], const sk_mesh *mesh) {
  float inv[16], r[16];
  if (!absolute_inverse_unscaled(b, bone, mesh, inv))
    return;
  sk_mat_mul(inv, rot, r);
  rotate_with_matrix(b, bone, r, SK_SPACE_WORLD, mesh);
}

void sk_bone_set_rotation_quaternion(sk_bones *b, int32_t bone, const double q[4], sk_space space,
                                     const sk_mesh *mesh) {
  if (space == SK_SPACE_LOCAL) {
    sk_local_set_rotation_quaternion(local_of(b, bone), q);
    return;
  }
  float rot[16];
  sk_bone_quat_to_matrix(q, rot);
  rotate_world_to(b, bone, rot, mesh);
}

void sk_bone_set_yaw_pitch_roll(sk_bones *b, int32_t bone, double yaw, double pitch, double roll, sk_space space,
                                const sk_mesh *mesh) {
  double q[4];
  sk_quat_from_yaw_pitch_roll(yaw, pitch, roll, q);
  /* Local: setRotationQuaternion(q); world: Matrix.RotationYawPitchRollToRef
   * is the same quaternion as a matrix. */
  sk_bone_set_rotation_quaternion(b, bone, q, space, mesh);
}

void sk_bone_rotate(sk_bones *b, int32_t bone, const double axis[3], double amount, sk_space space,
                    const sk_mesh *mesh) {
  float r[16];
  sk_bone_rotation_axis(axis, amount, r);
  rotate_with_matrix(b, bone, r, space, mesh);
}

void sk_bone_set_axis_angle(sk_bones *b, int32_t bone, const double axis[3], double angle, sk_space space,
                            const sk_mesh *mesh) {
  if (space == SK_SPACE_LOCAL) {
    double q[4];
    sk_bone_quat_rotation_axis(axis, angle, q);
    sk_local_set_rotation_quaternion(local_of(b, bone), q);
    return;
  }
  float r[16];
  sk_bone_rotation_axis(axis, angle, r);
  rotate_world_to(b, bone, r, mesh);
}

void sk_bone_set_rotation(sk_bones *b, int32_t bone, const double r[3], sk_space space, const sk_mesh *mesh) {
  sk_bone_set_yaw_pitch_roll(b, bone, r[1], r[0], r[2], space, mesh);
}

void sk_bone_set_rotation_matrix(sk_bones *b, int32_t bone, const float m[16], sk_space space, const sk_mesh *mesh) {
  if (space == SK_SPACE_LOCAL) {
    double q[4];
    sk_quat_from_rotation_matrix(m, q);
    sk_local_set_rotation_quaternion(local_of(b, bone), q);
    return;
  }
  rotate_world_to(b, bone, m, mesh);
}

void sk_bone_set_current_pose_as_rest(sk_bones *b, int32_t bone) {
  for (size_t i = bone >= 0 ? (size_t)bone : 0; i < b->s->count; i++) {
    sk_skeleton_set_rest(b->s, (int32_t)i, b->s->bones[i].local.matrix);
    b->rest_is_local[i] = 1;
    if (bone >= 0)
      break;
  }
}

/* ---- read-backs ---------------------------------------------------------------- */

void sk_bone_get_position(sk_bones *b, int32_t bone, sk_space space, const sk_mesh *mesh, double dest[3]) {
  float t[16];
  if (space == SK_SPACE_LOCAL)
    memcpy(t, peek_local(b, bone)->matrix, sizeof t);
  else
    absolute_in(b, bone, mesh, t);
  for (int i = 0; i < 3; i++)
    dest[i] = t[12 + i];
}

void sk_bone_get_direction(sk_bones *b, int32_t bone, const double axis[3], const sk_mesh *mesh, double dest[3]) {
  float t[16];
  absolute_in(b, bone, mesh, t);
  sk_bone_transform_normal(axis, t, dest);
  sk_bone_normalize(dest, dest);
}

/* The world matrix with the bind's reflection undone on its first row
 * (getRotationQuaternionToRef / getRotationMatrixToRef in world space). */
static void unreflected(sk_bones *b, int32_t bone, const sk_mesh *mesh, float m[16]) {
  absolute_in(b, bone, mesh, m);
  double d = sk_bones_scaling_det(b, bone);
  for (int i = 0; i < 3; i++)
    m[i] = (float)((double)m[i] * d);
}

void sk_bone_get_rotation_quaternion(sk_bones *b, int32_t bone, sk_space space, const sk_mesh *mesh,
                                     double dest[4]) {
  if (space == SK_SPACE_LOCAL) {
    sk_local *l = peek_local(b, bone);
    decompose(l);
    memcpy(dest, l->rotation, 4 * sizeof *dest);
    return;
  }
  float m[16];
  double s[3], t[3];
  unreflected(b, bone, mesh, m);
  sk_mat_decompose(m, s, dest, t);
}

void sk_bone_get_rotation(sk_bones *b, int32_t bone, sk_space space, const sk_mesh *mesh, double dest[3]) {
  double q[4];
  sk_bone_get_rotation_quaternion(b, bone, space, mesh, q);
  quat_to_euler(q, dest);
}

void sk_bone_get_rotation_matrix(sk_bones *b, int32_t bone, sk_space space, const sk_mesh *mesh, float dest[16]) {
  float m[16];
  if (space == SK_SPACE_LOCAL)
    memcpy(m, peek_local(b, bone)->matrix, sizeof m);
  else
    unreflected(b, bone, mesh, m);
  rotation_matrix_of(m, dest);
}

void sk_bone_get_scale(sk_bones *b, int32_t bone, double dest[3]) {
  sk_local *l = peek_local(b, bone);
  decompose(l);
  memcpy(dest, l->scaling, 3 * sizeof *dest);
}

void sk_bone_get_absolute_position_from_local(sk_bones *b, int32_t bone, const double p[3], const sk_mesh *mesh,
                                              double dest[3]) {
  float t[16];
  absolute_in(b, bone, mesh, t);
  sk_bone_transform_coords(p, t, dest);
}

void sk_bone_get_local_position_from_absolute(sk_bones *b, int32_t bone, const double p[3], const sk_mesh *mesh,
                                              double dest[3]) {
  float t[16];
  absolute_in(b, bone, mesh, t);
  sk_mat_invert(t, t);
  sk_bone_transform_coords(p, t, dest);
}
