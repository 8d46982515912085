/* The in-place root channels of Babylon 9.34's RootMotionClip
 * (_buildInPlaceGroup): at each source key's frame, the root's pose in
 * character space with the motion at that frame undone (turn, then
 * travel), brought back into its parent's space. Matrices are float as
 * Babylon's, the keys doubles as its Vector3 and Quaternion keys. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim_math.h"
#include "sk_fdlibm.h"
#include "sk_mat.h"
#include "sk_rootmotion_int.h"

#define RM_PI 3.141592653589793

/* Math.round: the nearest integer, halves towards +infinity. */
static double js_round(double v) {
  double f = floor(v);
  return v - f >= 0.5 ? f + 1 : f;
}

typedef struct inplace_ref {
  double start[3];   /* the root in character space at the first frame */
  double ref_conj[4]; /* the conjugate of its rotation there */
  double range;
} inplace_ref;

/* inPlaceAt: the root's in-place local position and rotation at `frame`. */
static void inplace_at(rm_ctx *x, const inplace_ref *r, double frame, double pos[3], double rot[4]) {
  const sk_rootmotion *rm = x->rm;
  const int32_t root = rm->root_node, parent = x->s->bones[root].parent;
  float root_m[16], parent_m[16], motion[16], inv[16], local[16];
  sk_rootmotion__to_character(x, root, frame, root_m);
  /* Babylon's identity flag: a parent chain of no node stays the identity
   * matrix, whose inverse and products are copies. */
  const bool parent_identity = parent < 0 && x->above_count == 0;
  sk_rootmotion__to_character(x, parent, frame, parent_m);
  double yaw = 0, travel[3] = {0, 0, 0};
  if (rm->extracts_rotation) {
    double q[4];
    sk_rootmotion__rotation_at(x, root, frame, q);
    double wrapped = sk_rootmotion__twist(x, q, r->ref_conj), tracked = sk_rootmotion_rotation_at(rm, frame);
    yaw = wrapped + js_round((tracked - wrapped) / (2 * RM_PI)) * 2 * RM_PI;
  }
  if (rm->removes_root_travel) {
    double p[3] = {root_m[12], root_m[13], root_m[14]};
    sk_rootmotion__root_travel_at(x, p, r->start, yaw, rm->extracts_rotation, travel);
    if (!rm->extracts_rotation) {
      double k = fmin(1, fmax(0, (frame - rm->from_frame) / r->range));
      for (int j = 0; j < 3; j++)
        travel[j] += rm->lateral_drift[j] * k;
    }
  } else if (rm->pivots) {
    sk_rootmotion__root_travel_at(x, r->start, r->start, yaw, true, travel);
  }
  /* Quaternion.RotationAxisToRef(up, yaw), then the travel. */
  const double *up = rm->up;
  double q[4], k = sk_fdlibm_sin(yaw / 2) / sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]);
  q[3] = sk_fdlibm_cos(yaw / 2);
  q[0] = up[0] * k, q[1] = up[1] * k, q[2] = up[2] * k;
  sk_rootmotion__mat_from_quat(q, motion);
  motion[12] = (float)travel[0], motion[13] = (float)travel[1], motion[14] = (float)travel[2];
  sk_mat_invert(motion, inv);
  sk_mat_mul(root_m, inv, local);
  if (!parent_identity) {
    sk_mat_invert(parent_m, inv);
    sk_mat_mul(local, inv, local);
  }
  double s[3];
  sk_mat_decompose(local, s, rot, pos);
}

/* Babylon's rootMotion.ts TangentDelta: the frames either side of a key
 * the rewritten tangents of a turning root are measured over. */
#define RM_TANGENT_DELTA 1e-3

/* Vector3.TransformNormalToRef: v by m's upper 3x3 (row vector). */
static void transform_normal(const double v[3], const float m[16], double r[3]) {
  double o[3];
  for (int j = 0; j < 3; j++)
    o[j] = v[0] * m[j] + v[1] * m[4 + j] + v[2] * m[8 + j];
  memcpy(r, o, sizeof o);
}

/* The tangent `orig` (Babylon's key units) of a CUBICSPLINE position key
 * at `frame` when the root travels straight: the travel removal is linear,
 * so the tangent loses its projected part and the drift's rate. */
static void straight_tangent(rm_ctx *x, const inplace_ref *r, double frame, const double orig[3], double out[3]) {
  const sk_rootmotion *rm = x->rm;
  const int32_t parent = x->s->bones[rm->root_node].parent;
  float pm[16], inv[16];
  sk_rootmotion__to_character(x, parent, frame, pm);
  double in_char[3], removed[3] = {0, 0, 0}, back[3];
  transform_normal(orig, pm, in_char);
  if (rm->removes_root_travel) {
    sk_rootmotion__project(x, in_char, removed);
    const double k = 1 / r->range;
    for (int j = 0; j < 3; j++)
      removed[j] += rm->lateral_drift[j] * k;
  }
  if (parent < 0 && x->above_count == 0)
    memcpy(inv, pm, sizeof inv); /* the identity's inverse is itself */
  else
    sk_mat_invert(pm, inv);
  transform_normal(removed, inv, back);
  for (int j = 0; j < 3; j++)
    out[j] = orig[j] - back[j];
}

/* The in- and out-tangent of in-place key `i` at `frame` (its value
 * pos/rot, rot in its hemisphere) from the source key's own tangents
 * `src_in`/`src_out` (the loader's, / 60): _buildInPlaceGroup's tangent(),
 * including the sign flips it makes on the key's rotation in between. */
static void key_tangents(rm_ctx *x, const inplace_ref *r, int kind, double frame, const double pos[3],
                         const double rot_in[4], const double *src_in, const double *src_out, double *t_in,
                         double *t_out) {
  if (kind == 0 && !x->rm->extracts_rotation) {
    straight_tangent(x, r, frame, src_in, t_in);
    straight_tangent(x, r, frame, src_out, t_out);
    return;
  }
  const double k = 1 / RM_TANGENT_DELTA;
  double bp[3], br[4], ap[3], ar[4], rot[4];
  memcpy(rot, rot_in, sizeof rot);
  for (int dir = -1; dir <= 1; dir += 2) {
    double *t = dir < 0 ? t_in : t_out;
    inplace_at(x, r, frame - RM_TANGENT_DELTA, bp, br);
    inplace_at(x, r, frame + RM_TANGENT_DELTA, ap, ar);
    const double *lp = dir < 0 ? bp : pos, *hp = dir < 0 ? pos : ap;
    double *lr = dir < 0 ? br : rot, *hr = dir < 0 ? rot : ar;
    if (kind == 0) {
      for (int j = 0; j < 3; j++)
        t[j] = (hp[j] - lp[j]) * k;
      continue;
    }
    if (lr[0] * hr[0] + lr[1] * hr[1] + lr[2] * hr[2] + lr[3] * hr[3] < 0)
      for (int j = 0; j < 4; j++)
        hr[j] *= -1; /* the in-tangent may flip the key's own rotation for the out-tangent */
    for (int j = 0; j < 4; j++)
      t[j] = (hr[j] - lr[j]) * k;
  }
}

/* One rewritten channel: keys at frames[0..n) (copied), kind 0 position,
 * 1 rotation (each key in the hemisphere of the one before); with `src`
 * CUBICSPLINE, the tangents too. */
static int inplace_keys(rm_ctx *x, const inplace_ref *r, int kind, const double *frames, size_t n, int interp,
                        const sk_anim_channel *src) {
  sk_rootmotion *rm = x->rm;
  const size_t w = kind == 0 ? 3 : 4;
  const bool cubic = src != NULL && interp == SK_ANIM_CUBICSPLINE;
  double *f = malloc(n * sizeof *f), *v = malloc(n * w * sizeof *v);
  double *tg = cubic ? malloc(n * 2 * w * sizeof *tg) : NULL;
  if (f == NULL || v == NULL || (cubic && tg == NULL)) {
    free(f), free(v), free(tg);
    return SK_ENOMEM;
  }
  memcpy(f, frames, n * sizeof *f);
  const double invfps = 1 / SK_ANIM_FPS;
  for (size_t i = 0; i < n; i++) {
    double pos[3], rot[4];
    inplace_at(x, r, f[i], pos, rot);
    if (kind == 1) {
      const double *prev = v + (i - 1) * 4;
      if (i > 0 && prev[0] * rot[0] + prev[1] * rot[1] + prev[2] * rot[2] + prev[3] * rot[3] < 0)
        for (int j = 0; j < 4; j++)
          rot[j] *= -1;
    }
    memcpy(v + i * w, kind == 0 ? pos : rot, w * sizeof *v);
    if (!cubic)
      continue;
    double s_in[4], s_out[4]; /* the loader's Vector3/Quaternion.scaleInPlace(1 / fps) */
    for (size_t j = 0; j < w; j++) {
      s_in[j] = (double)src->values[i * 3 * w + j] * invfps;
      s_out[j] = (double)src->values[i * 3 * w + 2 * w + j] * invfps;
    }
    key_tangents(x, r, kind, f[i], pos, rot, s_in, s_out, tg + i * 2 * w, tg + i * 2 * w + w);
  }
  rm->inplace[kind].interp = interp;
  rm->inplace[kind].count = n;
  rm->inplace[kind].frames = f;
  rm->inplace[kind].values = v;
  rm->inplace[kind].tangents = tg;
  return 0;
}

int sk_rootmotion__build_inplace(rm_ctx *x, const sk_anim_channel *const *last, sk_error *err) {
  sk_rootmotion *rm = x->rm;
  const int32_t root = rm->root_node;
  if (root < 0 || (!rm->removes_root_travel && !rm->extracts_rotation))
    return 0;
  const sk_anim_channel *pos = last[(size_t)root * 3 + SK_ANIM_TRANSLATION];
  const sk_anim_channel *rot = last[(size_t)root * 3 + SK_ANIM_ROTATION];
  (void)err; /* every interpolation is taken: nothing to refuse */
  inplace_ref r = {.range = fmax(rm->to_frame - rm->from_frame, 1e-6)};
  sk_rootmotion__position_at(x, root, rm->from_frame, r.start);
  sk_rootmotion__rotation_at(x, root, rm->from_frame, r.ref_conj);
  for (int j = 0; j < 3; j++)
    r.ref_conj[j] = -r.ref_conj[j];
  int rc;
  if (pos != NULL) {
    rc = inplace_keys(x, &r, 0, pos->frames, pos->count, pos->interp, pos);
  } else {
    /* A root that only turns gets a position channel held at its start,
     * keyed as densely as the analysis. */
    double *f = malloc((rm->samples + 1) * sizeof *f);
    if (f == NULL)
      return SK_ENOMEM;
    for (size_t i = 0; i <= rm->samples; i++)
      f[i] = sk_rootmotion__frame_at(x, i);
    rc = inplace_keys(x, &r, 0, f, rm->samples + 1, SK_ANIM_LINEAR, NULL);
    free(f);
  }
  if (rc == 0 && rm->extracts_rotation && rot != NULL)
    rc = inplace_keys(x, &r, 1, rot->frames, rot->count, rot->interp, rot);
  return rc;
}

/* A CUBICSPLINE in-place channel at `frame`: Animation._interpolate's
 * Hermite with each tangent scaled by the key interval (Vector3.scale),
 * quaternions normalised, clamped to the keys as goToFrame plays them. */
static void cubic_at(const sk_rootmotion *rm, int k, double frame, double *out) {
  const size_t w = k == 0 ? 3 : 4, n = rm->inplace[k].count;
  const double *f = rm->inplace[k].frames, *v = rm->inplace[k].values, *tg = rm->inplace[k].tangents;
  if (frame < f[0])
    frame = f[0];
  else if (frame > f[n - 1])
    frame = f[n - 1];
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (frame >= f[mid])
      lo = mid;
    else
      hi = mid;
  }
  if (lo + 1 > n - 1) {
    memcpy(out, v + lo * w, w * sizeof *out);
    return;
  }
  const double fd = f[lo + 1] - f[lo], gradient = (frame - f[lo]) / fd;
  double t1[4], t2[4];
  for (size_t j = 0; j < w; j++) {
    t1[j] = tg[lo * 2 * w + w + j] * fd;  /* the start key's out-tangent */
    t2[j] = tg[(lo + 1) * 2 * w + j] * fd; /* the end key's in-tangent */
  }
  sk_anim__hermite(v + lo * w, t1, v + (lo + 1) * w, t2, gradient, (int)w, out);
  if (w == 4)
    sk_anim__quat_normalize(out);
}

void sk_rootmotion_inplace_at(const sk_rootmotion *rm, double frame, double position[3], double rotation[4]) {
  for (int k = 0; k < 2; k++) {
    if (rm->inplace[k].count == 0)
      continue;
    if (rm->inplace[k].tangents != NULL) {
      cubic_at(rm, k, frame, k == 0 ? position : rotation);
      continue;
    }
    const sk_anim_channel ch = {.bone = rm->root_node, .path = k == 0 ? SK_ANIM_TRANSLATION : SK_ANIM_ROTATION,
                                .interp = rm->inplace[k].interp, .count = rm->inplace[k].count,
                                .frames = rm->inplace[k].frames};
    sk_anim__sample_values(&ch, rm->inplace[k].values, frame, k == 0 ? position : rotation);
  }
}
