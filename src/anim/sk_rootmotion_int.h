/* sk_rootmotion's private parts, shared by the analysis (sk_rootmotion.c)
 * and the in-place channels built from it (sk_rootmotion_inplace.c). */
#ifndef SK_ROOTMOTION_INT_H
#define SK_ROOTMOTION_INT_H

#include "sk_rootmotion.h"

/* The analysis's working state: the clip's channels per bone and one
 * frame's local matrices. */
typedef struct rm_ctx {
  const sk_skeleton *s;
  const sk_anim *a;
  const sk_anim_clip *c;
  const sk_rootmotion_opts *o;
  sk_rootmotion *rm;
  uint8_t *has;     /* per bone HAS_* */
  int32_t *order;   /* animated bones in order of first channel (Babylon's Map order) */
  size_t animated;
  float *above;     /* above_count local matrices */
  size_t above_count;
  double *trs;      /* bone_count * SK_ANIM_TRS */
  float *local;     /* bone_count * 16 */
  double frame;     /* the frame trs/local hold, NAN: none */
} rm_ctx;

/* WrapAngle, _horizontal, _project, Matrix.FromQuaternionToRef (float),
 * _rotateAboutUp, _matrixToCharacter (bone -1: the nodes above the
 * skeleton only; the identity when there are none), _positionInCharacter,
 * _rotationInCharacter, _frameAt, _twist and _rootTravelAt, as Babylon
 * 9.34 computes them. */
double sk_rootmotion__wrap_angle(double angle);
void sk_rootmotion__horizontal(const rm_ctx *x, const double v[3], double r[3]);
void sk_rootmotion__project(const rm_ctx *x, const double v[3], double r[3]);
void sk_rootmotion__mat_from_quat(const double q[4], float m[16]);
void sk_rootmotion__rotate_about_up(const rm_ctx *x, const double v[3], double angle, double r[3]);
void sk_rootmotion__to_character(rm_ctx *x, int32_t bone, double frame, float m[16]);
void sk_rootmotion__position_at(rm_ctx *x, int32_t bone, double frame, double p[3]);
void sk_rootmotion__rotation_at(rm_ctx *x, int32_t bone, double frame, double q[4]);
double sk_rootmotion__frame_at(const rm_ctx *x, size_t i);
double sk_rootmotion__twist(const rm_ctx *x, const double q[4], const double ref_conj[4]);
void sk_rootmotion__root_travel_at(rm_ctx *x, const double pos[3], const double start[3], double yaw, bool turning,
                                   double r[3]);

/* _buildInPlaceGroup's rewritten root channels into x->rm->inplace, once
 * the analysis is done (`last`: the clip's last channel per bone and
 * path); LINEAR, STEP and CUBICSPLINE root keys alike. 0 or SK_ENOMEM
 * (`err` is kept for the caller's protocol and left untouched). */
int sk_rootmotion__build_inplace(rm_ctx *x, const sk_anim_channel *const *last, sk_error *err);

#endif
