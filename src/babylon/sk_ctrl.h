/* sk_ctrl: Babylon's bone controllers, one update() of a fresh controller,
 * bit for bit with @babylonjs/core 9.34.0 (Bones/boneIKController.js).
 *
 * The controller is built and updated in one call, on the skeleton's
 * current state, so it carries nothing from one call to the next (Babylon's
 * slerp state and previous angle start fresh, as for a new controller). */
#ifndef SK_CTRL_H
#define SK_CTRL_H

#include "sk_bone.h"

/* BoneIKController(mesh, bone, options) then update(). Options as
 * Babylon's; a zero `max_angle` or `slerp_amount` or `pole_angle` is
 * Babylon's default (its `if (options.x)` tests skip a 0). */
typedef struct sk_ik_options {
  double target[3];           /* targetPosition */
  bool has_pole_target;       /* poleTargetPosition given: no pole bone */
  double pole_target[3];
  int32_t pole_target_bone;   /* -1: Babylon's default, the grandparent */
  /* poleTargetMesh given (its world matrix): the pole is
   * poleTargetLocalOffset through it (Vector3.TransformCoordinates, in
   * doubles), and no pole bone */
  bool has_pole_target_mesh;
  float pole_target_mesh[16];
  double pole_target_local_offset[3];
  double pole_angle;
  bool has_bend_axis;
  double bend_axis[3];
  double max_angle;
  double slerp_amount;
} sk_ik_options;

/* What update() needs: the bone has a parent, and a pole (a pole
 * position, a pole mesh, a pole bone or a grandparent). A leaf of length 0 (or none)
 * passes: Babylon's controller then has not enough information and
 * update() does nothing, and so does sk_ctrl_ik. 0, or SK_ERANGE with
 * `why` set to a static explanation. */
int sk_ctrl_ik_check(const sk_skeleton *s, int32_t bone, const sk_ik_options *o, const char **why);

/* Runs the controller on `bone` (Babylon's bone2; its parent is bone1).
 * `mesh` may be NULL: an identity TransformNode. Call sk_ctrl_ik_check
 * first; bones it refuses are left unchanged. */
void sk_ctrl_ik(sk_bones *b, int32_t bone, const sk_mesh *mesh, const sk_ik_options *o);

/* BoneLookController(mesh, bone, target, options) then update(). The
 * has_* flags are Babylon's `!= null` tests (a 0 there is a value). A
 * fresh controller with slerpAmount < 1 skips its first update(): the op
 * then changes nothing, as in Babylon. */
typedef struct sk_look_options {
  double target[3];
  bool has_up_axis, has_yaw_axis, has_pitch_axis;
  double up_axis[3], yaw_axis[3], pitch_axis[3];
  int up_axis_space; /* 0 local (default), 1 world, 2 bone: Babylon's Space */
  bool has_min_yaw, has_max_yaw, has_min_pitch, has_max_pitch, has_slerp_amount;
  double min_yaw, max_yaw, min_pitch, max_pitch, slerp_amount;
  double adjust_yaw, adjust_pitch, adjust_roll;
  bool use_absolute_value_for_yaw;
} sk_look_options;

/* Runs the controller on `bone`; `mesh` may be NULL (an identity node). */
void sk_ctrl_look_at(sk_bones *b, int32_t bone, const sk_mesh *mesh, const sk_look_options *o);

#endif
