/* sk_ops: Babylon's Bone API as JSON ops, parsed once into a typed list
 * and applied to a skeleton (sk_bone), for `skinner eval` and the daemon.
 *
 * Every op names a bone ("bone") and, where Babylon takes them, a space
 * ("space": "local" (default) | "world") and a mesh ("mesh": a node object,
 * null for none; absent = the caller's default mesh):
 *   translate {vector}            setPosition {position}
 *   setAbsolutePosition {position}
 *   scale {scale, scaleChildren?} setScale {scale}
 *   setYawPitchRoll {yaw, pitch, roll}
 *   rotate {axis, amount}         setAxisAngle {axis, angle}
 *   setRotation {rotation}        setRotationQuaternion {quaternion}
 *   setRotationMatrix {matrix}    setCurrentPoseAsRest {bone?}
 *   query {get, space?, axis? (get "direction"), point? (get
 *          "absolutePositionFromLocal" | "localPositionFromAbsolute")}
 * with get one of position, absolutePosition, direction, rotation,
 * rotationQuaternion, rotationMatrix, scale, absolutePositionFromLocal,
 * localPositionFromAbsolute. A query appends {"query", "bone", "value"}.
 *   ik {target | targetMesh, poleTarget? | poleTargetMesh? |
 *       poleTargetBone? + poleTargetLocalOffset?, poleAngle?, bendAxis?,
 *       maxAngle?, slerpAmount?, mesh?}: one update() of a fresh
 *       BoneIKController(mesh, bone, options); "bone" is Babylon's bone
 *       (the lower one), its parent turns too. "target" is targetPosition
 *       (doubles as given); "targetMesh" a node whose float32 world
 *       translation is the target, as Babylon reads a targetMesh. A leaf
 *       of length 0 is taken and left alone (Babylon's update() does
 *       nothing for it).
 *   lookAt {target, upAxis?, upAxisSpace? ("local" | "world" | "bone"),
 *       yawAxis?, pitchAxis?, minYaw?, maxYaw?, minPitch?, maxPitch?,
 *       adjustYaw?, adjustPitch?, adjustRoll?, slerpAmount?,
 *       useAbsoluteValueForYaw?, mesh?}: one update() of a fresh
 *       BoneLookController(mesh, bone, target, options).
 *
 * A mesh node is {"position"?, "rotation"? | "rotationQuaternion"?,
 * "scaling"?, "parent"?: node}, composed as TransformNode.computeWorldMatrix. */
#ifndef SK_OPS_H
#define SK_OPS_H

#include <jansson.h>
#include <stdbool.h>

#include "sk_bone.h"
#include "sk_ctrl.h"
#include "sk_error.h"
#include "sk_buf.h"

#define SK_MESH_MAX_DEPTH 64

typedef enum sk_op_kind {
  SK_OP_TRANSLATE,
  SK_OP_SET_POSITION,
  SK_OP_SET_ABSOLUTE_POSITION,
  SK_OP_SCALE,
  SK_OP_SET_SCALE,
  SK_OP_SET_YAW_PITCH_ROLL,
  SK_OP_ROTATE,
  SK_OP_SET_AXIS_ANGLE,
  SK_OP_SET_ROTATION,
  SK_OP_SET_ROTATION_QUATERNION,
  SK_OP_SET_ROTATION_MATRIX,
  SK_OP_SET_CURRENT_POSE_AS_REST,
  SK_OP_QUERY,
  SK_OP_IK,
  SK_OP_LOOK_AT,
} sk_op_kind;

typedef enum sk_query {
  SK_Q_POSITION,
  SK_Q_ABSOLUTE_POSITION,
  SK_Q_DIRECTION,
  SK_Q_ROTATION,
  SK_Q_ROTATION_QUATERNION,
  SK_Q_ROTATION_MATRIX,
  SK_Q_SCALE,
  SK_Q_ABSOLUTE_POSITION_FROM_LOCAL,
  SK_Q_LOCAL_POSITION_FROM_ABSOLUTE,
} sk_query;

typedef struct sk_op {
  sk_op_kind kind;
  sk_query query;   /* SK_OP_QUERY */
  int32_t bone;     /* position in bones[]; -1 only for a skeleton-wide setCurrentPoseAsRest */
  sk_space space;
  bool has_mesh;
  bool flag;        /* scaleChildren */
  sk_mesh mesh;
  double v[4];      /* vector, position, scale, axis, point, rotation, quaternion, or yaw/pitch/roll */
  double amount;    /* rotate amount, setAxisAngle angle */
  float matrix[16]; /* setRotationMatrix */
  sk_ik_options ik; /* SK_OP_IK */
  sk_look_options look; /* SK_OP_LOOK_AT */
} sk_op;

/* True when `name` is one of the op names above. */
bool sk_ops_known(const char *name);

/* Parses a mesh node (object, parent chain) into `mesh`. null gives
 * *has = false. Errors: SK_ETYPE/SK_ELENGTH/SK_ENOTFINITE/SK_EUNKNOWN at the
 * field, SK_ERANGE past SK_MESH_MAX_DEPTH, SK_ESINGULAR for a singular or
 * non-finite world matrix. */
int sk_ops_parse_mesh(const json_t *j, const char *ptr, bool *has, sk_mesh *mesh, sk_error *err);

/* Parses one op object against `s`; `default_mesh` (may be NULL) is used
 * when the op has no "mesh" key. Unknown bone: SK_ENOTFOUND; zero-length
 * axis: SK_ERANGE; non-finite: SK_ENOTFINITE; unknown key: SK_EUNKNOWN. */
int sk_ops_parse_one(const sk_skeleton *s, const json_t *j, const char *ptr, const sk_mesh *default_mesh, sk_op *op,
                     sk_error *err);
/* Parses an array of ops. *out is new (free()), *count entries. */
int sk_ops_parse(const sk_skeleton *s, const json_t *j, const char *ptr, const sk_mesh *default_mesh, sk_op **out,
                 size_t *count, sk_error *err);

/* Applies ops in order. Each query appends its result object to `results`
 * (comma-separated after the first result counted in *nresults; `results`
 * may be NULL to drop them). 0 or SK_ENOMEM. */
int sk_ops_apply(sk_bones *b, const sk_op *ops, size_t count, sk_strbuf *results, size_t *nresults);

/* Appends ,"world":[...] and/or ,"positions":[...] (bones[] order) as
 * members of an object being written (`first`: no leading comma). */
int sk_ops_write_world(sk_bones *b, const sk_mesh *mesh, bool world, bool positions, bool first, sk_strbuf *out);
/* The same from sk_bones_world's arrays of `n` bones, already computed. */
int sk_ops_write_world_arrays(const float *w, const float *p, size_t n, bool world, bool positions, bool first,
                              sk_strbuf *out);

#endif
