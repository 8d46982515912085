/* sk_bone: Babylon.js's Bone methods (world-space edits and read-backs),
 * bit for bit, on a mutable sk_skeleton.
 *
 * Babylon keeps each bone's `_absoluteMatrix` lazily: it is refreshed only
 * by Skeleton.computeAbsoluteMatrices(), which walks bones[0]'s subtree and
 * no other root, and it starts as a zero matrix. Methods that read a bone's
 * absolute matrix therefore see stale (or zero) matrices under a second
 * root. sk_bones keeps that array beside the skeleton so the same calls give
 * the same numbers. Refreshing bones[0]'s subtree on every read is the same
 * as Babylon's dirty flag: every setter marks the skeleton dirty, and a
 * refresh of unchanged locals recomputes identical products.
 *
 * Vectors and angles are double (Babylon's Vector3/Quaternion are JS
 * numbers); matrices are float (Babylon's Float32Array). Each function
 * follows bone.pure.js of @babylonjs/core 9.34.0 operation by operation;
 * build with -ffp-contract=off (see sk_mat.h). */
#ifndef SK_BONE_H
#define SK_BONE_H

#include <stdbool.h>
#include <stdint.h>

#include "sk_skeleton.h"

/* Babylon's Space.LOCAL / Space.WORLD. */
typedef enum sk_space { SK_SPACE_LOCAL = 0, SK_SPACE_WORLD = 1 } sk_space;

/* A TransformNode as Babylon's world-space methods use it (`tNode`): its
 * world matrix and its own `scaling` (not its parents'). */
typedef struct sk_mesh {
  float world[16];
  double scaling[3];
} sk_mesh;

/* One TransformNode of a mesh chain: position, rotation quaternion (an
 * Euler `rotation` is converted with RotationYawPitchRoll(y, x, z), as
 * computeWorldMatrix does), scaling. */
typedef struct sk_mesh_node {
  double position[3], rotation[4], scaling[3];
} sk_mesh_node;

/* TransformNode.computeWorldMatrix over a chain: nodes[0] is the mesh
 * itself, nodes[k+1] the parent of nodes[k]. world = local(0) · ... ·
 * local(n-1); the scaling is nodes[0]'s. Fails with SK_ESINGULAR (mesh
 * unchanged) when the world matrix has determinant 0 or a non-finite
 * entry: every world-space method inverts it. n >= 1. */
int sk_mesh_compose(const sk_mesh_node *nodes, size_t n, sk_mesh *mesh);

/* A skeleton with Babylon's lazily refreshed absolute matrices. */
typedef struct sk_bones {
  sk_skeleton *s;  /* borrowed; mutated by the setters */
  float *absolute; /* owned; count*16, bones[] order */
  /* owned; count flags: the rest matrix is a copy of the local made by
   * setCurrentPoseAsRest, and the local has not changed since. Babylon's
   * copy keeps the matrix's updateFlag, and returnToRest's `_matrix = rest`
   * returns early on an equal flag: the TRS cache is then not re-read
   * from the float matrix (which would round it differently). */
  uint8_t *rest_is_local;
  /* owned; the locals (count*16) and parents (count) bones[0]'s subtree was
   * last computed from: while none differs, a recomputation would give the
   * absolute matrices already there, so sk_bones_absolute skips it (the
   * Bone API asks for them after every setter, mostly with nothing
   * changed). seen_valid is false until then, and after anyone but
   * sk_bones writes `absolute`. */
  float *seen_local;
  int32_t *seen_parent;
  bool seen_valid;
  /* Between sk_bones_solve_begin and _end the locals change only through
   * sk_bones' setters, which lower dirty_from to the bone they set: a read
   * recomputes from there without comparing every local (a solver reads
   * after each of its setters). */
  bool solving;
  size_t dirty_from;
} sk_bones;

/* A solver (IK, look-at) runs between these two, changing the locals only
 * through the sk_bone_set_* functions. */
void sk_bones_solve_begin(sk_bones *b);
void sk_bones_solve_end(sk_bones *b);

/* Zero absolute matrices, as a fresh Babylon skeleton has. 0 or SK_ENOMEM. */
int sk_bones_init(sk_bones *b, sk_skeleton *s);
/* Back to sk_bones_init's state on the same skeleton, whose bone count has
 * not changed, without allocating. */
void sk_bones_reset(sk_bones *b);
void sk_bones_close(sk_bones *b);
/* Bone.computeAbsoluteMatrices() on every root (what the "absolute",
 * "world" and "positions" outputs read). */
void sk_bones_refresh_all(sk_bones *b);
/* Bone.getAbsoluteMatrix(): refreshes bones[0]'s subtree, returns bone's. */
const float *sk_bones_absolute(sk_bones *b, int32_t bone);
/* `_scalingDeterminant`: -1 when the bone's absolute bind has a negative
 * determinant, else 1. */
double sk_bones_scaling_det(const sk_bones *b, int32_t bone);

/* Setters. `mesh` may be NULL (no tNode). Axes must not be zero-length
 * (the caller checks: Babylon would divide by zero). The world-space
 * rotations do nothing when the bone's absolute (× mesh) matrix does not
 * invert to a number, as Babylon's. */
void sk_bone_translate(sk_bones *b, int32_t bone, const double v[3], sk_space space, const sk_mesh *mesh);
void sk_bone_set_position(sk_bones *b, int32_t bone, const double p[3], sk_space space, const sk_mesh *mesh);
/* Bone.scale(x, y, z, scaleChildren). */
void sk_bone_scale(sk_bones *b, int32_t bone, const double s[3], bool scale_children);
void sk_bone_set_scale(sk_bones *b, int32_t bone, const double s[3]);
void sk_bone_set_yaw_pitch_roll(sk_bones *b, int32_t bone, double yaw, double pitch, double roll, sk_space space,
                                const sk_mesh *mesh);
void sk_bone_rotate(sk_bones *b, int32_t bone, const double axis[3], double amount, sk_space space,
                    const sk_mesh *mesh);
void sk_bone_set_axis_angle(sk_bones *b, int32_t bone, const double axis[3], double angle, sk_space space,
                            const sk_mesh *mesh);
/* setRotation(r) = setYawPitchRoll(r.y, r.x, r.z). */
void sk_bone_set_rotation(sk_bones *b, int32_t bone, const double r[3], sk_space space, const sk_mesh *mesh);
void sk_bone_set_rotation_quaternion(sk_bones *b, int32_t bone, const double q[4], sk_space space,
                                     const sk_mesh *mesh);
void sk_bone_set_rotation_matrix(sk_bones *b, int32_t bone, const float m[16], sk_space space, const sk_mesh *mesh);
/* Bone.setCurrentPoseAsRest(); bone < 0: Skeleton.setCurrentPoseAsRest(). */
void sk_bone_set_current_pose_as_rest(sk_bones *b, int32_t bone);

/* Bone.returnToRest() with Babylon's early return (see rest_is_local);
 * bone < 0: Skeleton.returnToRest() (bones with a slot). */
void sk_bones_return_to_rest(sk_bones *b, int32_t bone);
/* Tells `b` that something outside sk_bone changed the bone's local or
 * rest matrix (a "set", setBind or setRest op). */
void sk_bones_touch(sk_bones *b, int32_t bone);

/* Read-backs; results in `dest` (3 or 4 doubles, or 16 floats). */
void sk_bone_get_position(sk_bones *b, int32_t bone, sk_space space, const sk_mesh *mesh, double dest[3]);
void sk_bone_get_direction(sk_bones *b, int32_t bone, const double axis[3], const sk_mesh *mesh, double dest[3]);
void sk_bone_get_rotation(sk_bones *b, int32_t bone, sk_space space, const sk_mesh *mesh, double dest[3]);
void sk_bone_get_rotation_quaternion(sk_bones *b, int32_t bone, sk_space space, const sk_mesh *mesh,
                                     double dest[4]);
void sk_bone_get_rotation_matrix(sk_bones *b, int32_t bone, sk_space space, const sk_mesh *mesh, float dest[16]);
void sk_bone_get_scale(sk_bones *b, int32_t bone, double dest[3]);
void sk_bone_get_absolute_position_from_local(sk_bones *b, int32_t bone, const double p[3], const sk_mesh *mesh,
                                              double dest[3]);
void sk_bone_get_local_position_from_absolute(sk_bones *b, int32_t bone, const double p[3], const sk_mesh *mesh,
                                              double dest[3]);

/* Outputs: after sk_bones_refresh_all, absolute (× mesh world) of every
 * bone in bones[] order (count*16 floats), and their translations
 * (count*3 floats). Either may be NULL. */
void sk_bones_world(sk_bones *b, const sk_mesh *mesh, float *world, float *positions);

/* Babylon math shared with sk_ctrl (math.vector.pure.js, same rounding). */
/* Matrix.FromQuaternionToRef. */
void sk_bone_quat_to_matrix(const double q[4], float m[16]);
/* Vector3.normalizeToRef: unchanged at length 0 or exactly 1. dest may be v. */
void sk_bone_normalize(const double v[3], double dest[3]);
/* Matrix.RotationAxisToRef (normalises the axis). */
void sk_bone_rotation_axis(const double axis[3], double angle, float m[16]);
/* Quaternion.RotationAxisToRef. */
void sk_bone_quat_rotation_axis(const double axis[3], double angle, double q[4]);
/* Vector3.TransformCoordinatesToRef. */
void sk_bone_transform_coords(const double v[3], const float m[16], double dest[3]);
/* Vector3.TransformNormalToRef (no normalise). dest may be v. */
void sk_bone_transform_normal(const double v[3], const float m[16], double dest[3]);

#endif
