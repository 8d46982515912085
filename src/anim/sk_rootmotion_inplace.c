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

/* One rewritten channel: keys at frames[0..n) (copied), kind 0 position,
 * 1 rotation (each key in the hemisphere of the one before). */
static int inplace_keys(rm_ctx *x, const inplace_ref *r, int kind, const double *frames, size_t n, int interp) {
  sk_rootmotion *rm = x->rm;
  const size_t w = kind == 0 ? 3 : 4;
  double *f = malloc(n * sizeof *f), *v = malloc(n * w * sizeof *v);
  if (f == NULL || v == NULL) {
    free(f), free(v);
    return SK_ENOMEM;
  }
  memcpy(f, frames, n * sizeof *f);
  for (size_t i = 0; i < n; i++) {
    double pos[3], rot[4];
    inplace_at(x, r, f[i], pos, rot);
    if (kind == 0) {
      memcpy(v + i * 3, pos, sizeof pos);
      continue;
    }
    const double *prev = v + (i - 1) * 4;
    if (i > 0 && prev[0] * rot[0] + prev[1] * rot[1] + prev[2] * rot[2] + prev[3] * rot[3] < 0)
      for (int j = 0; j < 4; j++)
        rot[j] *= -1;
    memcpy(v + i * 4, rot, sizeof rot);
  }
  rm->inplace[kind].interp = interp;
  rm->inplace[kind].count = n;
  rm->inplace[kind].frames = f;
  rm->inplace[kind].values = v;
  return 0;
}

int sk_rootmotion__build_inplace(rm_ctx *x, const sk_anim_channel *const *last, sk_error *err) {
  sk_rootmotion *rm = x->rm;
  const int32_t root = rm->root_node;
  if (root < 0 || (!rm->removes_root_travel && !rm->extracts_rotation))
    return 0;
  const sk_anim_channel *pos = last[(size_t)root * 3 + SK_ANIM_TRANSLATION];
  const sk_anim_channel *rot = last[(size_t)root * 3 + SK_ANIM_ROTATION];
  if ((pos != NULL && pos->interp == SK_ANIM_CUBICSPLINE) ||
      (rm->extracts_rotation && rot != NULL && rot->interp == SK_ANIM_CUBICSPLINE))
    return sk_error_set(err, SK_ERANGE, "/rootMotion",
                        "the root node's keys are CUBICSPLINE: in-place root motion takes LINEAR or STEP root keys");
  inplace_ref r = {.range = fmax(rm->to_frame - rm->from_frame, 1e-6)};
  sk_rootmotion__position_at(x, root, rm->from_frame, r.start);
  sk_rootmotion__rotation_at(x, root, rm->from_frame, r.ref_conj);
  for (int j = 0; j < 3; j++)
    r.ref_conj[j] = -r.ref_conj[j];
  int rc;
  if (pos != NULL) {
    rc = inplace_keys(x, &r, 0, pos->frames, pos->count, pos->interp);
  } else {
    /* A root that only turns gets a position channel held at its start,
     * keyed as densely as the analysis. */
    double *f = malloc((rm->samples + 1) * sizeof *f);
    if (f == NULL)
      return SK_ENOMEM;
    for (size_t i = 0; i <= rm->samples; i++)
      f[i] = sk_rootmotion__frame_at(x, i);
    rc = inplace_keys(x, &r, 0, f, rm->samples + 1, SK_ANIM_LINEAR);
    free(f);
  }
  if (rc == 0 && rm->extracts_rotation && rot != NULL)
    rc = inplace_keys(x, &r, 1, rot->frames, rot->count, rot->interp);
  return rc;
}

void sk_rootmotion_inplace_at(const sk_rootmotion *rm, double frame, double position[3], double rotation[4]) {
  for (int k = 0; k < 2; k++) {
    if (rm->inplace[k].count == 0)
      continue;
    const sk_anim_channel ch = {.bone = rm->root_node, .path = k == 0 ? SK_ANIM_TRANSLATION : SK_ANIM_ROTATION,
                                .interp = rm->inplace[k].interp, .count = rm->inplace[k].count,
                                .frames = rm->inplace[k].frames};
    sk_anim__sample_values(&ch, rm->inplace[k].values, frame, k == 0 ? position : rotation);
  }
}
