#include "sk_ctrl.h"

#include <math.h>
#include <string.h>

#include "sk_fdlibm.h"
#include "sk_mat.h"

static const sk_mesh k_identity_mesh = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, {1, 1, 1}};

static bool has_child(const sk_skeleton *s, int32_t bone, int32_t *first) {
  for (size_t c = (size_t)bone + 1; c < s->count; c++)
    if (s->bones[c].parent == bone) {
      if (first != NULL)
        *first = (int32_t)c;
      return true;
    }
  return false;
}

/* BoneIKController's `_notEnoughInformation` for a bone with a parent: a
 * leaf whose length is 0 or unset. The constructor returns early and
 * update() does nothing. */
static bool leaf_without_length(const sk_skeleton *s, int32_t bone) {
  const sk_bone *b2 = &s->bones[bone];
  return !has_child(s, bone, NULL) && !(b2->has_length && b2->length != 0);
}

int sk_ctrl_ik_check(const sk_skeleton *s, int32_t bone, const sk_ik_options *o, const char **why) {
  int32_t p = s->bones[bone].parent;
  if (p < 0) {
    *why = "IK needs a bone with a parent (the chain is parent -> bone)";
    return SK_ERANGE;
  }
  if (leaf_without_length(s, bone))
    return 0; /* Babylon answers: the controller leaves the bones as they are */
  if (!o->has_pole_target && !o->has_pole_target_mesh && o->pole_target_bone < 0 && s->bones[p].parent < 0) {
    *why = "IK needs a pole: \"poleTarget\", \"poleTargetBone\", or a grandparent";
    return SK_ERANGE;
  }
  return 0;
}

static double distance(const double a[3], const double b[3]) {
  double x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
  return sqrt(x * x + y * y + z * z);
}

static void cross(const double l[3], const double r[3], double d[3]) {
  double x = l[1] * r[2] - l[2] * r[1];
  double y = l[2] * r[0] - l[0] * r[2];
  double z = l[0] * r[1] - l[1] * r[0];
  d[0] = x;
  d[1] = y;
  d[2] = z;
}

/* Quaternion.SlerpToRef. */
static void slerp(const double l[4], const double r[4], double amount, double d[4]) {
  double n2, n3, n4 = l[0] * r[0] + l[1] * r[1] + l[2] * r[2] + l[3] * r[3];
  bool flag = false;
  if (n4 < 0) {
    flag = true;
    n4 = -n4;
  }
  if (n4 > 0.999999) {
    n3 = 1 - amount;
    n2 = flag ? -amount : amount;
  } else {
    double n5 = sk_fdlibm_acos(n4), n6 = 1.0 / sk_fdlibm_sin(n5);
    n3 = sk_fdlibm_sin((1.0 - amount) * n5) * n6;
    n2 = flag ? -sk_fdlibm_sin(amount * n5) * n6 : sk_fdlibm_sin(amount * n5) * n6;
  }
  for (int i = 0; i < 4; i++)
    d[i] = n3 * l[i] + n2 * r[i];
}

/* The constructor's state. */
typedef struct ik {
  int32_t bone1, bone2, pole_bone;
  double len1, len2, max_reach, adjust_roll, bend[3];
  bool right_handed;
  float bone1_mat[16];
} ik;

static void ik_init(sk_bones *b, int32_t bone, const sk_mesh *mesh, const sk_ik_options *o, ik *k) {
  const sk_skeleton *s = b->s;
  memset(k, 0, sizeof *k);
  k->bone2 = bone;
  k->bone1 = s->bones[bone].parent;
  k->bend[0] = 1; /* Vector3.Right() */
  double pos[3];
  sk_bone_get_position(b, bone, SK_SPACE_LOCAL, NULL, pos);
  if (sk_mat_det(sk_bones_absolute(b, bone)) > 0) {
    k->right_handed = true;
    k->bend[0] = 0;
    k->bend[1] = 0;
    k->bend[2] = -1;
    if (pos[0] > pos[1] && pos[0] > pos[2]) {
      k->adjust_roll = M_PI * 0.5;
      k->bend[2] = 1;
    }
  }
  const sk_bone *b1 = &s->bones[k->bone1], *b2 = &s->bones[bone];
  double l1 = b1->has_length ? b1->length : 0, l2 = b2->has_length ? b2->length : 0;
  int32_t child;
  double p1[3], p2[3], p3[3], sc[3];
  if (l1 != 0 && l2 != 0) {
    sk_bone_get_scale(b, k->bone1, sc);
    k->len1 = l1 * sc[1] * mesh->scaling[1];
    sk_bone_get_scale(b, bone, sc);
    k->len2 = l2 * sc[1] * mesh->scaling[1];
  } else if (has_child(s, bone, &child)) {
    sk_bone_get_position(b, child, SK_SPACE_WORLD, mesh, p1);
    sk_bone_get_position(b, bone, SK_SPACE_WORLD, mesh, p2);
    sk_bone_get_position(b, k->bone1, SK_SPACE_WORLD, mesh, p3);
    k->len2 = distance(p1, p2);
    k->len1 = distance(p2, p3);
  } else {
    sk_bone_get_scale(b, bone, sc);
    k->len2 = l2 * sc[1] * mesh->scaling[1];
    sk_bone_get_position(b, bone, SK_SPACE_WORLD, mesh, p2);
    sk_bone_get_position(b, k->bone1, SK_SPACE_WORLD, mesh, p3);
    k->len1 = distance(p2, p3);
  }
  sk_bone_get_rotation_matrix(b, k->bone1, SK_SPACE_WORLD, mesh, k->bone1_mat);
  /* _setMaxAngle: clamped to [0, pi]; a 0 option keeps pi. */
  double ang = o->max_angle != 0 ? o->max_angle : M_PI;
  if (ang < 0)
    ang = 0;
  if (ang > M_PI)
    ang = M_PI;
  k->max_reach = sqrt(k->len1 * k->len1 + k->len2 * k->len2 - 2 * k->len1 * k->len2 * sk_fdlibm_cos(ang));
  k->pole_bone = o->has_pole_target || o->has_pole_target_mesh ? -1
                 : o->pole_target_bone >= 0                    ? o->pole_target_bone
                                                               : s->bones[k->bone1].parent;
  if (o->has_bend_axis)
    memcpy(k->bend, o->bend_axis, sizeof k->bend);
}

/* mat1 := the bone1 frame aiming at the target, bent by angB. */
static double ik_frame(sk_bones *b, const ik *k, const sk_mesh *mesh, const sk_ik_options *o, float mat1[16]) {
  double pole[3], bone_pos[3], up[3], x[3], y[3], z[3];
  if (k->pole_bone >= 0)
    sk_bone_get_absolute_position_from_local(b, k->pole_bone, o->pole_target_local_offset, mesh, pole);
  else if (o->has_pole_target_mesh)
    sk_bone_transform_coords(o->pole_target_local_offset, o->pole_target_mesh, pole);
  else
    memcpy(pole, o->pole_target, sizeof pole);
  sk_bone_get_position(b, k->bone1, SK_SPACE_WORLD, mesh, bone_pos);
  for (int i = 0; i < 3; i++) {
    up[i] = pole[i] - bone_pos[i];
    y[i] = o->target[i] - bone_pos[i];
  }
  if (up[0] == 0 && up[1] == 0 && up[2] == 0)
    up[1] = 1;
  else
    sk_bone_normalize(up, up);
  sk_bone_normalize(y, y);
  cross(y, up, z);
  sk_bone_normalize(z, z);
  cross(y, z, x);
  sk_bone_normalize(x, x);
  float m[16] = {(float)x[0], (float)x[1], (float)x[2], 0, (float)y[0], (float)y[1], (float)y[2], 0,
                 (float)z[0], (float)z[1], (float)z[2], 0, 0, 0, 0, 1};
  memcpy(mat1, m, sizeof m);
  double a = k->len1, bl = k->len2, c = distance(bone_pos, o->target);
  if (k->max_reach > 0)
    c = fmin(k->max_reach, c);
  double acosa = (bl * bl + c * c - a * a) / (2 * bl * c);
  double acosb = (c * c + a * a - bl * bl) / (2 * c * a);
  acosa = acosa > 1 ? 1 : acosa < -1 ? -1 : acosa;
  acosb = acosb > 1 ? 1 : acosb < -1 ? -1 : acosb;
  double ang_a = sk_fdlibm_acos(acosa), ang_b = sk_fdlibm_acos(acosb);
  float m2[16];
  if (k->right_handed) {
    double q[4];
    sk_quat_from_yaw_pitch_roll(0, 0, k->adjust_roll, q);
    sk_bone_quat_to_matrix(q, m2);
    sk_mat_mul(m2, mat1, mat1);
    sk_bone_rotation_axis(k->bend, ang_b, m2);
    sk_mat_mul(m2, mat1, mat1);
  } else {
    double t[3] = {-k->bend[0], k->bend[1], k->bend[2]};
    sk_bone_rotation_axis(t, -ang_b, m2);
    sk_mat_mul(m2, mat1, mat1);
  }
  if (o->pole_angle != 0) {
    sk_bone_rotation_axis(y, o->pole_angle, m2);
    sk_mat_mul(mat1, m2, mat1);
  }
  return -ang_a - ang_b;
}

void sk_ctrl_ik(sk_bones *b, int32_t bone, const sk_mesh *mesh, const sk_ik_options *o) {
  if (leaf_without_length(b->s, bone))
    return;
  if (mesh == NULL)
    mesh = &k_identity_mesh;
  ik k;
  sk_bones_solve_begin(b);
  ik_init(b, bone, mesh, o, &k);
  float mat1[16];
  double ang_c = ik_frame(b, &k, mesh, o, mat1);
  double slerp_amount = o->slerp_amount != 0 ? o->slerp_amount : 1;
  if (slerp_amount < 1) {
    /* A fresh controller: not yet slerping, previous bone2 angle pi. */
    double q1[4], q2[4], q[4];
    sk_quat_from_rotation_matrix(k.bone1_mat, q1);
    sk_quat_from_rotation_matrix(mat1, q2);
    slerp(q1, q2, slerp_amount, q);
    ang_c = M_PI * (1.0 - slerp_amount) + ang_c * slerp_amount;
    sk_bone_set_rotation_quaternion(b, k.bone1, q, SK_SPACE_WORLD, mesh);
  } else {
    sk_bone_set_rotation_matrix(b, k.bone1, mat1, SK_SPACE_WORLD, mesh);
  }
  sk_bone_set_axis_angle(b, bone, k.bend, ang_c, SK_SPACE_LOCAL, NULL);
  sk_bones_solve_end(b);
}

/* ---- BoneLookController ---------------------------------------------------- */

static double angle_diff(double a1, double a2) {
  double d = fmod(a2 - a1, M_PI * 2);
  if (d > M_PI)
    d -= M_PI * 2;
  else if (d < -M_PI)
    d += M_PI * 2;
  return d;
}

static double wrap_2pi(double a) {
  a = fmod(a, 2 * M_PI);
  return a < 0 ? a + 2 * M_PI : a;
}

static bool angle_between(double ang, double a1, double a2) {
  ang = wrap_2pi(ang);
  a1 = wrap_2pi(a1);
  a2 = wrap_2pi(a2);
  return a1 < a2 ? ang > a1 && ang < a2 : ang > a2 && ang < a1;
}

/* Matrix.FromXYZAxesToRef. */
static void from_axes(const double x[3], const double y[3], const double z[3], float m[16]) {
  float r[16] = {(float)x[0], (float)x[1], (float)x[2], 0, (float)y[0], (float)y[1], (float)y[2], 0,
                 (float)z[0], (float)z[1], (float)z[2], 0, 0, 0, 0, 1};
  memcpy(m, r, sizeof r);
}

static bool is_zero(const double v[3]) { return v[0] == 0 && v[1] == 0 && v[2] == 0; }

/* The limits as the controller's setters store them. */
typedef struct look_limits {
  double max_yaw, min_yaw, max_pitch, min_pitch;
  double max_yaw_sin, max_yaw_cos, min_yaw_sin, min_yaw_cos, max_pitch_tan, min_pitch_tan;
  double mid_yaw, yaw_range;
} look_limits;

static void look_limits_init(const sk_look_options *o, look_limits *l) {
  l->max_yaw = o->has_max_yaw ? o->max_yaw : M_PI;
  l->min_yaw = o->has_min_yaw ? o->min_yaw : -M_PI;
  l->max_pitch = o->has_max_pitch ? o->max_pitch : M_PI;
  l->min_pitch = o->has_min_pitch ? o->min_pitch : -M_PI;
  l->max_yaw_sin = sk_fdlibm_sin(l->max_yaw);
  l->max_yaw_cos = sk_fdlibm_cos(l->max_yaw);
  l->min_yaw_sin = sk_fdlibm_sin(l->min_yaw);
  l->min_yaw_cos = sk_fdlibm_cos(l->min_yaw);
  l->max_pitch_tan = sk_fdlibm_tan(l->max_pitch);
  l->min_pitch_tan = sk_fdlibm_tan(l->min_pitch);
  l->mid_yaw = angle_diff(l->min_yaw, l->max_yaw) * 0.5 + l->min_yaw;
  l->yaw_range = l->max_yaw - l->min_yaw;
}

/* The yaw/pitch clamp of update(): moves `target` into the limits. */
static void look_clamp(const look_limits *l, const sk_look_options *o, bool check_yaw, bool check_pitch,
                       const float sm[16], const double bone_pos[3], double target[3]) {
  float si[16];
  sk_mat_invert(sm, si);
  bool has_xz = false;
  double xzlen = 0, lt[3];
  if (check_pitch) {
    for (int i = 0; i < 3; i++)
      lt[i] = target[i] - bone_pos[i];
    sk_bone_transform_coords(lt, si, lt);
    xzlen = sqrt(lt[0] * lt[0] + lt[2] * lt[2]);
    has_xz = true;
    double pitch = sk_fdlibm_atan2(lt[1], xzlen), np = pitch;
    if (pitch > l->max_pitch) {
      lt[1] = l->max_pitch_tan * xzlen;
      np = l->max_pitch;
    } else if (pitch < l->min_pitch) {
      lt[1] = l->min_pitch_tan * xzlen;
      np = l->min_pitch;
    }
    if (pitch != np) {
      sk_bone_transform_coords(lt, sm, lt);
      for (int i = 0; i < 3; i++)
        target[i] = lt[i] + bone_pos[i];
    }
  }
  if (!check_yaw)
    return;
  for (int i = 0; i < 3; i++)
    lt[i] = target[i] - bone_pos[i];
  sk_bone_transform_coords(lt, si, lt);
  double yaw = sk_fdlibm_atan2(lt[0], lt[2]), ny = yaw;
  double yc = o->use_absolute_value_for_yaw ? fabs(yaw) : yaw;
  if (yc > l->max_yaw || yc < l->min_yaw) {
    if (!has_xz)
      xzlen = sqrt(lt[0] * lt[0] + lt[2] * lt[2]);
    if (l->yaw_range > M_PI) {
      if (angle_between(yaw, l->max_yaw, l->mid_yaw)) {
        lt[2] = l->max_yaw_cos * xzlen;
        lt[0] = l->max_yaw_sin * xzlen;
        ny = l->max_yaw;
      } else if (angle_between(yaw, l->mid_yaw, l->min_yaw)) {
        lt[2] = l->min_yaw_cos * xzlen;
        lt[0] = l->min_yaw_sin * xzlen;
        ny = l->min_yaw;
      }
    } else if (yc > l->max_yaw || yc < l->min_yaw) {
      bool max = yc > l->max_yaw;
      lt[2] = (max ? l->max_yaw_cos : l->min_yaw_cos) * xzlen;
      lt[0] = (max ? l->max_yaw_sin : l->min_yaw_sin) * xzlen;
      if (yaw < 0 && o->use_absolute_value_for_yaw)
        lt[0] *= -1;
      ny = max ? l->max_yaw : l->min_yaw;
    }
  }
  /* The slerping branch never runs on a fresh controller's update. */
  if (yaw != ny) {
    sk_bone_transform_coords(lt, sm, lt);
    for (int i = 0; i < 3; i++)
      target[i] = lt[i] + bone_pos[i];
  }
}

static void look_at(sk_bones *b, int32_t bone, const sk_mesh *mesh, const sk_look_options *o);

void sk_ctrl_look_at(sk_bones *b, int32_t bone, const sk_mesh *mesh, const sk_look_options *o) {
  if (mesh == NULL)
    mesh = &k_identity_mesh;
  if ((o->has_slerp_amount ? o->slerp_amount : 1) < 1)
    return; /* the first update of a slerping controller is skipped */
  sk_bones_solve_begin(b);
  look_at(b, bone, mesh, o);
  sk_bones_solve_end(b);
}

static void look_at(sk_bones *b, int32_t bone, const sk_mesh *mesh, const sk_look_options *o) {
  int32_t parent = b->s->bones[bone].parent;
  int space = o->up_axis_space;
  if (parent < 0 && space == 2)
    space = 0;
  look_limits l;
  look_limits_init(o, &l);
  bool tyaw = o->has_yaw_axis || o->has_pitch_axis;
  float typ[16], typ_inv[16];
  if (tyaw) {
    double ya[3] = {0, 1, 0}, pa[3] = {1, 0, 0}, ra[3];
    if (o->has_yaw_axis)
      sk_bone_normalize(o->yaw_axis, ya);
    if (o->has_pitch_axis)
      sk_bone_normalize(o->pitch_axis, pa);
    cross(pa, ya, ra);
    from_axes(pa, ya, ra, typ);
    memcpy(typ_inv, typ, sizeof typ); /* Babylon's names: the "Inv" is the matrix, */
    sk_mat_invert(typ, typ);         /* and _transformYawPitch its inverse */
  }
  double bone_pos[3], target[3], up[3] = {0, 1, 0};
  sk_bone_get_position(b, bone, SK_SPACE_WORLD, mesh, bone_pos);
  memcpy(target, o->target, sizeof target);
  if (o->has_up_axis)
    memcpy(up, o->up_axis, sizeof up);
  if (space == 2 && parent >= 0) {
    if (tyaw)
      sk_bone_transform_coords(up, typ_inv, up);
    sk_bone_get_direction(b, parent, up, mesh, up);
  } else if (space == 0) {
    sk_bone_transform_normal(up, mesh->world, up);
    if (mesh->scaling[0] != 1 || mesh->scaling[1] != 1 || mesh->scaling[2] != 1)
      sk_bone_normalize(up, up);
  }
  bool check_yaw = l.max_yaw != M_PI || l.min_yaw != -M_PI;
  bool check_pitch = l.max_pitch != M_PI || l.min_pitch != -M_PI;
  if (check_yaw || check_pitch) {
    float sm[16];
    if (space == 2 && up[1] == 1 && parent >= 0) {
      sk_bone_get_rotation_matrix(b, parent, SK_SPACE_WORLD, mesh, sm);
    } else if (space == 0 && up[1] == 1 && parent < 0) {
      memcpy(sm, mesh->world, sizeof sm);
    } else {
      double fwd[3] = {0, 0, 1}, right[3];
      if (tyaw)
        sk_bone_transform_coords(fwd, typ_inv, fwd);
      if (parent >= 0)
        sk_bone_get_direction(b, parent, fwd, mesh, fwd);
      else
        sk_bone_transform_normal(fwd, mesh->world, fwd);
      cross(up, fwd, right);
      sk_bone_normalize(right, right);
      cross(right, up, fwd);
      from_axes(right, up, fwd, sm);
    }
    look_clamp(&l, o, check_yaw, check_pitch, sm, bone_pos, target);
  }
  double x[3], y[3], z[3];
  float m1[16], m2[16];
  for (int i = 0; i < 3; i++)
    z[i] = target[i] - bone_pos[i];
  sk_bone_normalize(z, z);
  cross(up, z, x);
  sk_bone_normalize(x, x);
  cross(z, x, y);
  sk_bone_normalize(y, y);
  from_axes(x, y, z, m1);
  if (is_zero(x) || is_zero(y) || is_zero(z))
    return;
  if (o->adjust_yaw != 0 || o->adjust_pitch != 0 || o->adjust_roll != 0) {
    double q[4];
    sk_quat_from_yaw_pitch_roll(o->adjust_yaw, o->adjust_pitch, o->adjust_roll, q);
    sk_bone_quat_to_matrix(q, m2);
    sk_mat_mul(m2, m1, m1);
  }
  double scaling[3];
  sk_bone_get_scale(b, bone, scaling);
  if (tyaw)
    sk_mat_mul(typ, m1, m1);
  sk_bone_set_rotation_matrix(b, bone, m1, SK_SPACE_WORLD, mesh);
  sk_bone_set_scale(b, bone, scaling);
}
